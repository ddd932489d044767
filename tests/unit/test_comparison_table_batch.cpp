// The comparison table shows the batch each query carried wherever a cell's is not 1: latency is
// per query, so `run --input` with a file of 7 rows read as batch 1 misleads by 7x.
#include <gtest/gtest.h>

#include <regex>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "harness/planned_batch.hpp"
#include "report/comparison_table.hpp"
#include "report/result_set.hpp"

namespace infermark::report {
namespace {

result::RunResult cell(const std::string& backend, long long batch) {
  result::RunResult r;
  r.backend.name = backend;
  r.backend.version = "1.0";
  r.model.name = "tiny_cnn";
  r.scenario.batch = batch;
  return r;
}

}  // namespace

TEST(ComparisonTableBatch, ABatchOtherThanOneGetsAColumn) {
  const auto table = comparison_table({cell("onnxruntime", 7), cell("openvino", 7)});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| backend +\| version +\| +threads +\| +batch +\| +mean)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| onnxruntime +\| 1\.0 +\| +- +\| +7 +\|)"))) << table;
}

TEST(ComparisonTableBatch, CellsThatRanDifferentBatchesEachSayTheirs) {
  const auto table = comparison_table({cell("onnxruntime", 1), cell("openvino", 4)});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| onnxruntime +\| 1\.0 +\| +- +\| +1 +\|)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| openvino +\| 1\.0 +\| +- +\| +4 +\|)"))) << table;
}

// A framework without a batch axis (ncnn) runs the batch sample by sample; its row says so.
TEST(ComparisonTableBatch, ABatchRunOneSampleAtATimeSaysSo) {
  auto ncnn = cell("ncnn", 7);
  ncnn.effective_settings.push_back({"batch_execution", "", "7 extractions in a row", SettingState::kVerified, ""});
  const auto table = comparison_table({cell("onnxruntime", 7), ncnn});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| ncnn +\| 1\.0 +\| +- +\| +7 \(one by one\) +\|)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| onnxruntime +\| 1\.0 +\| +- +\| +7 +\|)"))) << table;
}

// The report's and recommend's cell labels say it too ("ncnn batch 7 (one by one)").
TEST(ComparisonTableBatch, CellLabelsOfABatchRunOneSampleAtATimeSaySo) {
  auto ncnn = cell("ncnn", 7);
  ncnn.effective_settings.push_back({"batch_execution", "", "7 extractions in a row", SettingState::kVerified, ""});
  EXPECT_EQ(cell_label(ncnn), "ncnn batch 7 (one by one)");
  EXPECT_EQ(cell_label(cell("onnxruntime", 7)), "onnxruntime batch 7");
}

TEST(ComparisonTableBatch, BatchOneEverywhereKeepsTheTableAsItWas) {
  const auto table = comparison_table({cell("onnxruntime", 1), cell("openvino", 1)});
  EXPECT_EQ(table.find("batch"), std::string::npos) << table;
}

TEST(PlannedBatch, TheInputFilesRowsThenAShapeThenTheBatchFlag) {
  InputRequest inputs;
  inputs.batch = 3;
  EXPECT_EQ(harness::planned_batch_text(inputs), "batch 3");
  inputs.shape_overrides["input"] = {5, 3, 32, 32};
  EXPECT_EQ(harness::planned_batch_text(inputs), "batch 5 (--shape input=5x3x32x32)");
  const auto file = std::filesystem::temp_directory_path() / "infermark_planned_batch_7.npy";
  Tensor photos{"input", DType::kFloat32, {7, 3, 4, 4}, {}};
  photos.data.resize(photos.element_count() * 4);
  write_npy(photos, file);
  inputs.files["input"] = file.string();
  EXPECT_EQ(harness::planned_batch_text(inputs), "batch 7 (rows of --input input=" + file.string() + ")");
  EXPECT_EQ(read_npy_shape(file), photos.shape);
  std::filesystem::resize_file(file, 20);  // the header cut: named, as read_npy names it
  EXPECT_THROW(harness::planned_batch(inputs), Error);
  std::filesystem::remove(file);
}

}  // namespace infermark::report

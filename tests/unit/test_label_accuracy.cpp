// Accuracy against labels: top-1/top-5 from class scores, the labels file beside an input .npy,
// the result field's round trip, and the "vs labels" column only when some cell has it.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/input_labels.hpp"
#include "harness/label_check.hpp"
#include "harness/run_options.hpp"
#include "report/comparison_table.hpp"
#include "report/markdown_report.hpp"
#include "result/run_result.hpp"
#include "stats/label_accuracy.hpp"
#include "unit/synthetic_results.hpp"

namespace infermark {
namespace {

namespace fs = std::filesystem;

Tensor scores(std::vector<std::int64_t> shape, std::vector<float> values, const std::string& name = "logits") {
  Tensor t{name, DType::kFloat32, std::move(shape), std::vector<std::byte>(values.size() * 4)};
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// Three samples of six classes: sample 0's label ranks first, sample 1's third, sample 2's sixth.
Tensor three_samples() {
  return scores({3, 6}, {9, 1, 2, 3, 4, 5,  //
                         1, 2, 7, 8, 9, 0,  //
                         6, 5, 4, 3, 2, 1});
}

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("infermark_label_accuracy_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(LabelAccuracy, CountsTheLabelAtTheTopAndAmongTheFiveHighest) {
  const auto a = stats::label_accuracy(three_samples(), {0, 2, 5});
  EXPECT_EQ(a.samples, 3);
  EXPECT_EQ(a.output, "logits");
  EXPECT_DOUBLE_EQ(a.top1, 1.0 / 3);
  EXPECT_DOUBLE_EQ(a.top5, 2.0 / 3);  // sample 2's label scores lowest of six
}

TEST(LabelAccuracy, TiesRankLikeArgmaxAndFewerThanFiveClassesAlwaysHitTopFive) {
  const auto tied = scores({1, 3}, {4, 4, 1});
  EXPECT_DOUBLE_EQ(stats::label_accuracy(tied, {0}).top1, 1.0);  // argmax picks the first of equals
  EXPECT_DOUBLE_EQ(stats::label_accuracy(tied, {1}).top1, 0.0);
  EXPECT_DOUBLE_EQ(stats::label_accuracy(tied, {2}).top5, 1.0);
}

TEST(LabelAccuracy, RefusesAWrongLabelCountOrAClassOutOfRange) {
  EXPECT_THROW(stats::label_accuracy(three_samples(), {0, 1}), Error);
  EXPECT_THROW(stats::label_accuracy(three_samples(), {0, 1, 6}), Error);
}

TEST(InputLabels, ReadsTheFileBesideTheNpyAndNothingWhenThereIsNone) {
  const auto dir = scratch("read");
  EXPECT_EQ(labels_path(dir / "images.npy"), dir / "images.labels.json");
  EXPECT_FALSE(read_input_labels(dir / "images.npy").has_value());
  write(dir / "images.labels.json", R"({"output": "logits", "labels": [372, 335, 950]})");
  const auto labels = read_input_labels(dir / "images.npy");
  ASSERT_TRUE(labels.has_value());
  EXPECT_EQ(labels->output, "logits");
  EXPECT_EQ(labels->labels, (std::vector<std::int64_t>{372, 335, 950}));
  EXPECT_EQ(labels->file, (dir / "images.labels.json").string());
}

TEST(InputLabels, AMalformedFileIsAnErrorNamingIt) {
  const auto dir = scratch("malformed");
  for (const std::string text : {R"([1, 2])", R"({"labels": []})", R"({"labels": [1, -2]})", R"({"labels": ["cat"]})", "{"}) {
    write(dir / "x.labels.json", text);
    try {
      read_input_labels(dir / "x.npy");
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("x.labels.json"), std::string::npos) << e.what();
    }
  }
}

TEST(InputLabels, AMalformedLabelsFileFailsTheRunBeforeAnythingIsMeasured) {
  const auto dir = scratch("early");
  write(dir / "images.npy", "not read here");
  write(dir / "images.labels.json", R"({"labels": [1, "cat"]})");
  harness::RunOptions options;
  options.model = "m.onnx";
  options.input_files = {"input=" + (dir / "images.npy").string()};
  try {
    harness::to_cell(options, "onnxruntime", 2);
    ADD_FAILURE() << "a malformed labels file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("images.labels.json"), std::string::npos) << e.what();
  }
}

TEST(LabelCheck, JudgesTheNamedOutputOfALabelledInputOnly) {
  const auto dir = scratch("check");
  write(dir / "images.labels.json", R"({"output": "logits", "labels": [0, 2, 5]})");
  const std::vector<Tensor> outputs{scores({3, 1}, {0, 0, 0}, "other"), three_samples()};
  EXPECT_FALSE(harness::check_labels({{"input", (dir / "plain.npy").string()}}, outputs).has_value());
  const auto a = harness::check_labels({{"input", (dir / "images.npy").string()}}, outputs);
  ASSERT_TRUE(a.has_value());
  EXPECT_DOUBLE_EQ(a->top1, 1.0 / 3);
  EXPECT_EQ(a->labels_file, (dir / "images.labels.json").string());
  write(dir / "images.labels.json", R"({"output": "probabilities", "labels": [0, 2, 5]})");
  EXPECT_THROW(harness::check_labels({{"input", (dir / "images.npy").string()}}, outputs), Error);
}

TEST(LabelAccuracy, SurvivesTheResultFileAndShowsAsAColumnOnlyWhenSomeCellHasIt) {
  auto labelled = testing::synthetic_result(testing::latency_samples(100, 2.0, 1), testing::CellSpec{"onnxruntime"});
  auto plain = testing::synthetic_result(testing::latency_samples(100, 3.0, 2), testing::CellSpec{"openvino"});
  EXPECT_EQ(report::comparison_table({plain.result}).find("vs labels"), std::string::npos);
  labelled.result.label_accuracy = stats::LabelAccuracy{"images.labels.json", "logits", 7, 6.0 / 7, 1.0};
  const auto back = result::run_result_from_json(result::to_json(labelled.result), "test");
  ASSERT_TRUE(back.label_accuracy.has_value());
  EXPECT_EQ(back.label_accuracy->samples, 7);
  EXPECT_DOUBLE_EQ(back.label_accuracy->top1, 6.0 / 7);
  EXPECT_FALSE(result::run_result_from_json(result::to_json(plain.result), "test").label_accuracy.has_value());
  const auto table = report::comparison_table({labelled.result, plain.result});
  EXPECT_NE(table.find("vs labels"), std::string::npos) << table;
  EXPECT_NE(table.find("top-1 85.7%, top-5 100.0% (7)"), std::string::npos) << table;
  EXPECT_NE(table.find("n/a"), std::string::npos) << table;
  const auto md = report::markdown_report({labelled, plain});
  EXPECT_NE(md.find("| vs labels"), std::string::npos) << md;
  EXPECT_NE(md.find("top-1 85.7%, top-5 100.0% (7)"), std::string::npos) << md;
}

}  // namespace infermark

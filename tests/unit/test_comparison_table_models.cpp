// `infermark run a.onnx b.onnx` compares several models in one table: each row then names its
// model (the corrupted-file test runs eight copies at once and reads them apart by it).
#include <gtest/gtest.h>

#include <regex>

#include "report/comparison_table.hpp"

namespace {

using infermark::report::comparison_table;
using infermark::result::RunResult;

RunResult failed_cell(const std::string& backend, const std::string& model) {
  RunResult r;
  r.backend.name = backend;
  r.model.name = model;
  r.status = infermark::result::CellStatus::kFailed;
  r.error = backend + ": cannot load " + model + ".onnx: Protobuf parsing failed. (while loading the model)";
  return r;
}

TEST(ComparisonTableModels, SeveralModelsGetAModelColumn) {
  const auto table = comparison_table({failed_cell("onnxruntime", "onnx-cut1"), failed_cell("opencv", "onnx-cuthalf")});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| backend +\| model +\| version)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| onnxruntime +\| onnx-cut1 +\|)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| opencv +\| onnx-cuthalf +\|)"))) << table;
}

TEST(ComparisonTableModels, OneModelKeepsTheTableAsItWas) {
  const auto table = comparison_table({failed_cell("onnxruntime", "tiny_cnn"), failed_cell("opencv", "tiny_cnn")});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| backend +\| version)"))) << table;
  EXPECT_EQ(table.find("| model"), std::string::npos) << table;
}

}  // namespace

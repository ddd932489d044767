// Cell labels (src/report/cell_labels.cpp) and zoo model families (src/report/model_families.cpp).
#include <set>

#include <gtest/gtest.h>

#include "harness/cross_check.hpp"
#include "report/cell_labels.hpp"
#include "report/model_families.hpp"
#include "report/result_set.hpp"
#include "synthetic_results.hpp"

namespace infermark::report {
namespace {

using testing::latency_samples;
using testing::synthetic_result;

LoadedResult llm_cell(int concurrency, const std::string& path) {
  auto cell = synthetic_result(latency_samples(20, 50.0, 1), {.backend = "llamacpp", .model = "llama-tiny"}, path);
  cell.result.scenario.name = loadgen::Scenario::kConcurrency;
  cell.result.scenario.parameters = result::scenario_parameters_from({{"name", "concurrency"},
                                                                      {"concurrency", concurrency},
                                                                      {"lanes", concurrency},
                                                                      {"prompt_tokens", 16},
                                                                      {"output_tokens", 8}});
  cell.result.generation = result::GenerationResult{};
  cell.result.generation->concurrency = concurrency;
  return cell;
}

std::vector<std::string> texts(const CellLabels& labels) {
  std::vector<std::string> out;
  for (const auto& c : labels.cells) out.push_back(c.text);
  return out;
}

TEST(CellLabels, ConcurrencyLevelsOfOneRunReadApartAndNothingRedundantIsAdded) {
  const auto labels = label_cells({llm_cell(1, "/r/a/c1.json"), llm_cell(4, "/r/a/c4.json"), llm_cell(16, "/r/a/c16.json")});
  // Lanes vary with concurrency: they split nothing further, so they are not repeated.
  EXPECT_EQ(texts(labels), (std::vector<std::string>{"llamacpp C=1", "llamacpp C=4", "llamacpp C=16"}));
  EXPECT_EQ(labels.cells[1].without(LabelDimension::kConcurrency), "llamacpp");
  std::set<std::string> shared;
  for (const auto& part : labels.shared) shared.insert(part.text);
  EXPECT_TRUE(shared.contains("t2")) << "a parameter every cell shares is reported once";
  EXPECT_TRUE(shared.contains("16+8 tok"));
  EXPECT_FALSE(shared.contains("llama-tiny")) << "the model names the section, not a shared parameter";
}

TEST(CellLabels, SingleStreamIsTheFirstPointOfAConcurrencyCurve) {
  auto one = llm_cell(1, "/r/a/c1.json");
  one.result.scenario.name = loadgen::Scenario::kSingleStream;  // what `run --concurrency 1,4` records at C=1
  const auto labels = label_cells({one, llm_cell(4, "/r/a/c4.json")});
  EXPECT_EQ(texts(labels), (std::vector<std::string>{"llamacpp C=1", "llamacpp C=4"}));
  EXPECT_EQ(labels.cells[0].without(LabelDimension::kConcurrency), labels.cells[1].without(LabelDimension::kConcurrency));
}

TEST(CellLabels, LanesAreNamedOnlyWhereConcurrencyLeavesCellsAlike) {
  auto four_lanes = llm_cell(4, "/r/a/x.json");
  auto eight_lanes = llm_cell(4, "/r/a/y.json");
  eight_lanes.result.scenario.parameters.lanes = 8;
  EXPECT_EQ(texts(label_cells({four_lanes, eight_lanes})), (std::vector<std::string>{"llamacpp lanes 4", "llamacpp lanes 8"}));
}

TEST(CellLabels, AGgufFileNamesTheWeightsItHoldsNotThePrecisionAskedFor) {
  auto f16 = llm_cell(4, "/r/a/x.json");
  f16.result.effective_settings.push_back(
      {"precision", "fp32", "llama ?B F16", SettingState::kNotApplied, "fixed by the GGUF file"});
  auto q8 = llm_cell(4, "/r/a/y.json");
  q8.result.effective_settings.push_back(
      {"precision", "fp32", "llama ?B Q8_0", SettingState::kNotApplied, "fixed by the GGUF file"});
  EXPECT_EQ(texts(label_cells({f16, q8})), (std::vector<std::string>{"llamacpp F16", "llamacpp Q8_0"}));
}

TEST(CellLabels, EveryParameterThatVariesIsNamed) {
  auto fp16 = synthetic_result(latency_samples(20, 5.0, 2), {.threads = "1"}, "/r/a/x.json");
  fp16.result.requested.precision = "fp16";
  auto batch8 = synthetic_result(latency_samples(20, 5.0, 3), {.threads = "2", .batch = 8}, "/r/a/y.json");
  auto server = synthetic_result(latency_samples(20, 5.0, 4), {.threads = "2"}, "/r/a/z.json");
  server.result.scenario.name = loadgen::Scenario::kServer;
  server.result.scenario.parameters = result::scenario_parameters_from({{"name", "server"}, {"qps", 50}});
  auto other_machine = synthetic_result(latency_samples(20, 5.0, 5), {.threads = "2"}, "/r/b/w.json");
  other_machine.result.environment["hostname"] = "other";
  const auto labels = label_cells({fp16, batch8, server, other_machine});
  const auto all = texts(labels);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size()) << "labels alike";
  EXPECT_NE(all[0].find("fp16"), std::string::npos) << all[0];
  EXPECT_NE(all[0].find("t1"), std::string::npos) << all[0];
  EXPECT_NE(all[1].find("batch 8"), std::string::npos) << all[1];
  EXPECT_NE(all[2].find("server"), std::string::npos) << all[2];
  EXPECT_NE(all[3].find("other"), std::string::npos) << "the machine tells the last cell apart: " << all[3];
}

TEST(CellLabels, IdenticalCellsFromTwoRunsAreToldApartByTheirRunFolder) {
  const auto samples = latency_samples(20, 5.0, 6);
  const auto labels = label_cells({synthetic_result(samples, {}, "/r/monday/resnet50.onnxruntime.json"),
                                   synthetic_result(samples, {}, "/r/tuesday/resnet50.onnxruntime.json"),
                                   synthetic_result(samples, {.threads = "1"}, "/r/tuesday/resnet50.onnxruntime.t1.json")});
  // Only the cells still alike get the folder.
  EXPECT_EQ(texts(labels), (std::vector<std::string>{"onnxruntime t2 [monday]", "onnxruntime t2 [tuesday]", "onnxruntime t1"}));
}

TEST(CellLabels, ASingleCellIsNamedByItsBackend) {
  const auto labels = label_cells({synthetic_result(latency_samples(20, 5.0, 7), {.backend = "openvino"})});
  EXPECT_EQ(texts(labels), (std::vector<std::string>{"openvino"}));
}

TEST(CellLabels, CellsOfSeveralModelsNameTheirModel) {
  auto q8 = llm_cell(4, "/r/a/q8.json");
  q8.result.model.name = "llama-tiny_q8_0";
  const auto labels = label_cells({llm_cell(4, "/r/a/f.json"), q8});
  EXPECT_EQ(texts(labels), (std::vector<std::string>{"llama-tiny llamacpp", "llama-tiny_q8_0 llamacpp"}));
}

TEST(ModelFamilies, ZooPrecisionSuffixesJoinOneFamily) {
  EXPECT_EQ(parse_variant_name("llama-tiny_q4_0").family, "llama-tiny");
  EXPECT_EQ(parse_variant_name("llama-tiny_q4_0").precision, ZooPrecision::kQ4_0);
  EXPECT_EQ(parse_variant_name("smollm2-135m_int4").precision, ZooPrecision::kInt4);
  EXPECT_EQ(parse_variant_name("smollm2-135m_int4").family, "smollm2-135m");
  EXPECT_EQ(parse_variant_name("smollm2-135m_int4_awq").precision, ZooPrecision::kInt4Awq);
  EXPECT_EQ(parse_variant_name("smollm2-135m_int4_gptq").family, "smollm2-135m");
  EXPECT_EQ(parse_variant_name("resnet50_int8").precision, ZooPrecision::kInt8);
  EXPECT_EQ(parse_variant_name("resnet50").precision, ZooPrecision::kAsExported);
  EXPECT_EQ(parse_variant_name("_fp16").family, "_fp16") << "a suffix alone is a name, not a variant";
  // Mixed-precision builds are variants of their precision in the stem's family.
  EXPECT_EQ(parse_variant_name("efficientnet_lite0_int8_keep4").family, "efficientnet_lite0");
  EXPECT_EQ(parse_variant_name("efficientnet_lite0_int8_keep4").precision, ZooPrecision::kInt8);
  EXPECT_EQ(parse_variant_name("minilm_l6_topics_int8_attnfp32").family, "minilm_l6_topics");
  EXPECT_EQ(parse_variant_name("efficientnet_lite0_v2").family, "efficientnet_lite0_v2") << "no precision before the tag";
  const auto families =
      model_families({"bert", "llama-tiny", "resnet50_fp16", "llama-tiny_q8_0", "resnet50", "llama-tiny_fp16", "tiny_cnn"});
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].family, "llama-tiny");
  EXPECT_EQ(families[0].members, (std::vector<std::size_t>{1, 3, 5}));
  EXPECT_EQ(families[1].family, "resnet50");
  EXPECT_EQ(families[1].members, (std::vector<std::size_t>{2, 4}));
}

TEST(ModelFamilies, OneModelInTwoFormatsIsAFamilyOfTwo) {
  const auto families = model_families({"resnet50", "resnet50"});
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].members.size(), 2u);
}

// One network in several formats (the zoo's resnet50.onnx, .pt and .ncnn.param) is one group;
// two files of one name and one format but different sizes are different models, kept apart.
TEST(GroupByModel, FormatsOfOneNetworkShareAGroupSameFormatFilesOfOtherSizesDoNot) {
  const auto cell = [](const std::string& backend, const std::string& format, long long bytes) {
    auto c = synthetic_result(latency_samples(20, 5.0, 1), {.backend = backend, .model = "resnet50"});
    c.result.model.format = format;
    c.result.model.size_bytes = bytes;
    return c;
  };
  const auto formats = group_by_model({cell("onnxruntime", "onnx", 100), cell("libtorch", "torchscript", 120),
                                       cell("ncnn", "ncnn", 7), cell("openvino", "onnx", 100)});
  ASSERT_EQ(formats.size(), 1u);
  EXPECT_EQ(formats.at("resnet50").size(), 4u);
  const auto two_onnx =
      group_by_model({cell("onnxruntime", "onnx", 100), cell("onnxruntime", "onnx", 200), cell("libtorch", "torchscript", 120)});
  EXPECT_EQ(two_onnx.size(), 3u);
  EXPECT_TRUE(two_onnx.count("resnet50 (100 bytes)") && two_onnx.count("resnet50 (200 bytes)"));
}

}  // namespace
}  // namespace infermark::report

// The cross-check's families: a file is compared with its family's reference, whatever its precision
// suffix, its OpenCV export or its mixed-precision tag.
TEST(ModelFamilies, CrossCheckFamiliesStripPrecisionOpenCvAndMixedTags) {
  using infermark::harness::model_family;
  EXPECT_EQ(model_family("resnet50_fp16"), "resnet50");
  EXPECT_EQ(model_family("efficientnet_lite0_opencv_int8"), "efficientnet_lite0");
  EXPECT_EQ(model_family("efficientnet_lite0_int8_keep16"), "efficientnet_lite0");
  EXPECT_EQ(model_family("minilm_l6_topics_int8_all"), "minilm_l6_topics");
  EXPECT_EQ(model_family("mpnet_base"), "mpnet_base") << "an underscore in the stem is no tag";
}

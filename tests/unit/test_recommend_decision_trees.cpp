// `recommend`'s decision trees of the field guides, LLM and power constraints, memory per parameter and the
// hardware matrix, on results shaped as real result files are (generation, resources and
// scenario objects read with the same functions `report` uses).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "report/decision_tree_verdicts.hpp"
#include "report/generation_table.hpp"
#include "report/machine.hpp"
#include "report/recommend.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using report::BranchVerdict;
using testing::llm_cell;
using testing::narrow_cell;

constexpr auto kScenario = report::DecisionTree::kFrameworkForScenario;
constexpr auto kPriority = report::DecisionTree::kFrameworkByPriority;
constexpr auto kWorkload = report::DecisionTree::kEngineForWorkload;

const report::DecisionTreeCheck& branch(const report::ModelRecommendation& m, report::DecisionTree tree,
                                        const std::string& name) {
  for (const auto& b : m.decision_tree_branches)
    if (b.branch.tree == tree && b.branch.branch == name) return b;
  throw std::out_of_range(std::string(report::name_of(tree)) + " " + name);
}

const report::CellAssessment& find(const report::ModelRecommendation& m, const std::string& backend) {
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& c : *list)
      if (c.backend == backend) return c;
  throw std::out_of_range(backend);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// openvino fastest, onnxruntime next, opencv slowest.
std::vector<report::LoadedResult> three_backends() {
  return {narrow_cell("onnxruntime", 20.0, 300.0), narrow_cell("openvino", 10.0, 500.0), narrow_cell("opencv", 50.0, 100.0)};
}

// The "resources" object of a run: `joules` over `duration_s` when energy was measured.
result::ResourceRecord resources(bool energy_measured, double joules, double duration_s) {
  return result::resources_from({{"duration_s", duration_s},
                                 {"peak_rss_mb", 300.0},
                                 {"energy",
                                  {{"available", energy_measured},
                                   {"source", energy_measured ? "rapl:package-0" : "RAPL not readable (permission denied)"},
                                   {"joules", energy_measured ? nlohmann::json(joules) : nlohmann::json(nullptr)}}},
                                 {"inferences", 1000.0}});
}

// A fixed-shape and a varying-shape cell of one backend; the varying one's mean latency is
// `slowdown` x the fixed one's at the same mean input size, so its slowdown per unit of work is `slowdown`.
std::vector<report::LoadedResult> shape_pair(const std::string& backend, double slowdown) {
  auto fixed = narrow_cell(backend, 10.0, 300.0);
  fixed.path = "/results/fixed/" + backend + ".json";
  fixed.result.scenario.inputs.push_back({"input", DType::kFloat32, {1, 3, 224, 224}, {}});
  auto varying = testing::synthetic_result(testing::scaled(fixed.result.samples_ms, slowdown), {.backend = backend},
                                           "/results/varying/" + backend + ".json");
  varying.result.scenario.parameters.varying_shapes = result::varying_shapes_from(
      {{"ranges", {{"input", "1x3x160..288x160..288"}}}, {"distinct_shapes", 32}, {"mean_input_elements", 3.0 * 224 * 224}});
  return {fixed, varying};
}

TEST(RecommendDecisionTrees, EveryBranchOfTheThreeTreesIsListedOnce) {
  const auto rec = report::recommend(three_backends(), {});
  const auto& branches = rec.models[0].decision_tree_branches;
  EXPECT_EQ(branches.size(), 14u);  // 000 §5: 6, 002 §6: 4, 003 §6: 4
  EXPECT_EQ(std::count_if(branches.begin(), branches.end(), [](const auto& b) { return b.branch.tree == kPriority; }), 4);
  EXPECT_EQ(branch(rec.models[0], kScenario, "latency-critical").branch.alternative, "FastDeploy, CUDA Graph on");
}

TEST(RecommendDecisionTrees, ConstraintsSelectBranches) {
  const auto plain = report::recommend(three_backends(), {});
  const auto& m = plain.models[0];
  EXPECT_FALSE(branch(m, kScenario, "latency-critical").selected);
  EXPECT_EQ(branch(m, kScenario, "latency-critical").verdict, BranchVerdict::kNotSelected);
  EXPECT_EQ(branch(m, kScenario, "latency-critical").detail, "pass --p99-ms");
  // The synthetic results come from an x86 CPU without a GPU, each fed one shape.
  EXPECT_EQ(branch(m, kScenario, "edge CPU").selected_by, "results from an x86 CPU without a GPU");
  EXPECT_TRUE(branch(m, kWorkload, "fixed input size").selected);
  EXPECT_FALSE(branch(m, kWorkload, "long generation").selected);

  report::Constraints c;
  c.p99_ms = 100.0;
  c.min_qps = 10.0;
  c.fast_iteration = true;
  c.multi_backend = true;
  const auto rec = report::recommend(three_backends(), c);
  const auto& latency = branch(rec.models[0], kScenario, "latency-critical");
  EXPECT_TRUE(latency.selected);
  EXPECT_EQ(latency.selected_by, "--p99-ms");
  EXPECT_EQ(branch(rec.models[0], kScenario, "high-throughput batch").selected_by, "--min-qps");
  EXPECT_EQ(branch(rec.models[0], kPriority, "maximum performance").selected_by, "--p99-ms");
  // The selection path is a priority order: fast iteration also matches but comes after maximum performance.
  const auto& fast = branch(rec.models[0], kPriority, "fast iteration");
  EXPECT_FALSE(fast.selected);
  EXPECT_EQ(fast.detail,
            "matches (--fast-iteration), but 'Which framework to choose, in priority order' takes 'maximum performance' first");
  EXPECT_EQ(branch(rec.models[0], kWorkload, "multi-backend").selected_by, "--multi-backend");

  report::Constraints dynamic;
  dynamic.dynamic_shapes = true;
  dynamic.p99_ms = 100.0;
  const auto shapes = report::recommend(three_backends(), dynamic);
  EXPECT_TRUE(branch(shapes.models[0], kPriority, "dynamic shapes").selected);
  EXPECT_FALSE(branch(shapes.models[0], kPriority, "maximum performance").selected);
  EXPECT_FALSE(branch(shapes.models[0], kWorkload, "fixed input size").selected);
}

TEST(RecommendDecisionTrees, TheRecordedHardwareSelectsEdgeCpuOrArmGpu) {
  auto gpu_resources = result::resources_from(
      {{"duration_s", 10.0}, {"gpu", {{"available", true}, {"reason", ""}, {"peak_memory_mb", 900.0}, {"mean_power_w", 80.0}}}});
  auto x86_gpu = narrow_cell("onnxruntime", 10.0, 300.0);
  x86_gpu.result.resources = gpu_resources;
  const auto on_x86 = report::recommend({x86_gpu}, {});
  EXPECT_FALSE(branch(on_x86.models[0], kScenario, "edge CPU").selected);  // a GPU was read: not an edge CPU
  EXPECT_FALSE(branch(on_x86.models[0], kScenario, "ARM GPU").selected);

  auto arm_gpu = x86_gpu;
  arm_gpu.result.environment = {{"cpu_model", "Neoverse-V2"}, {"cpu_flags_simd", "asimd asimdhp sve sve2"}};
  const auto on_arm = report::recommend({arm_gpu}, {});
  const auto& arm = branch(on_arm.models[0], kScenario, "ARM GPU");
  EXPECT_EQ(arm.selected_by, "results from an ARM CPU with a GPU");
  EXPECT_EQ(arm.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_FALSE(branch(on_arm.models[0], kScenario, "edge CPU").selected);
}

TEST(RecommendDecisionTrees, FrameworksThatCannotRunHereAreNotMeasuredWithWhatTheyWouldNeed) {
  report::Constraints c;
  c.p99_ms = 100.0;
  c.domestic_hardware = true;
  const auto rec = report::recommend(three_backends(), c);
  const auto& latency = branch(rec.models[0], kScenario, "latency-critical");
  EXPECT_EQ(latency.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_TRUE(latency.detail.starts_with("needs an NVIDIA GPU and a TensorRT backend")) << latency.detail;
  EXPECT_TRUE(contains(latency.detail, "lowest P99 of 3 cell(s): openvino t2")) << latency.detail;
  // Domestic hardware comes first in the selection path, so maximum performance is not selected there.
  EXPECT_TRUE(branch(rec.models[0], kPriority, "domestic hardware").selected);
  EXPECT_FALSE(branch(rec.models[0], kPriority, "maximum performance").selected);

  auto cells = three_backends();
  cells.push_back(narrow_cell("libtorch", 30.0, 400.0));
  report::Constraints iterate;
  iterate.fast_iteration = true;
  const auto fast = branch(report::recommend(cells, iterate).models[0], kPriority, "fast iteration");
  EXPECT_EQ(fast.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_TRUE(fast.detail.starts_with("needs a measure of development time")) << fast.detail;
  EXPECT_TRUE(contains(fast.detail, "LibTorch (PyTorch's runtime): libtorch t2 P99 3")) << fast.detail;
  EXPECT_TRUE(contains(fast.detail, "against the best, openvino t2 P99 1")) << fast.detail;
}

// The domestic-hardware branch names Paddle Inference and MNN, which run here on the CPU: it is
// judged on the better of the two against the other frameworks, and says what this machine cannot show.
TEST(RecommendDecisionTrees, DomesticHardwareIsJudgedOnPaddleAndMnnsMeasuredCellsAndSaysWhatIsNotMeasured) {
  report::Constraints c;
  c.domestic_hardware = true;
  const auto without = branch(report::recommend(three_backends(), c).models[0], kPriority, "domestic hardware");  // a copy
  EXPECT_EQ(without.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_TRUE(without.detail.starts_with("needs a cell of this model run with -b paddle or -b mnn")) << without.detail;

  auto cells = three_backends();
  cells.push_back(narrow_cell("paddle", 60.0, 600.0));
  cells.push_back(narrow_cell("mnn", 8.0, 400.0));
  const auto leads = branch(report::recommend(cells, c).models[0], kPriority, "domestic hardware");
  EXPECT_EQ(leads.verdict, BranchVerdict::kAgrees);
  EXPECT_TRUE(contains(leads.detail, "measured lowest P99 latency: mnn t2 P99 ")) << leads.detail;
  EXPECT_TRUE(contains(leads.detail, "(Ascend, Kunlun, Cambricon) are not measured here")) << leads.detail;

  cells.back() = narrow_cell("mnn", 40.0, 100.0);
  const auto trails = branch(report::recommend(cells, c).models[0], kPriority, "domestic hardware");
  EXPECT_EQ(trails.verdict, BranchVerdict::kContradicted);
  EXPECT_TRUE(contains(trails.detail, "(openvino t2 is ")) << trails.detail;
}

// The ARM edge branch names a pair: either framework's best counts for it, against every other's.
TEST(RecommendDecisionTrees, ArmEdgeCpuIsJudgedOnTheBetterOfTfliteAndNcnn) {
  const auto on_arm = [](report::LoadedResult cell) {
    cell.result.environment = {{"cpu_model", "Cortex-A76"}, {"cpu_flags_simd", "asimd asimdhp"}};
    return cell;
  };
  const auto x86 = report::recommend(three_backends(), {});
  const auto& unselected = branch(x86.models[0], kScenario, "ARM edge CPU");
  EXPECT_FALSE(unselected.selected);
  EXPECT_EQ(unselected.detail, "results from an ARM CPU without a GPU");

  const std::vector<report::LoadedResult> ncnn_leads{on_arm(narrow_cell("onnxruntime", 20.0, 300.0)),
                                                     on_arm(narrow_cell("tflite", 30.0, 300.0)),
                                                     on_arm(narrow_cell("ncnn", 10.0, 300.0))};
  const auto leads = report::recommend(ncnn_leads, {});
  const auto& agrees = branch(leads.models[0], kScenario, "ARM edge CPU");
  EXPECT_EQ(agrees.selected_by, "results from an ARM CPU without a GPU");
  EXPECT_EQ(agrees.verdict, BranchVerdict::kAgrees);
  EXPECT_TRUE(contains(agrees.detail, "measured lowest P99 latency: ncnn t2 P99 ")) << agrees.detail;
  EXPECT_FALSE(contains(agrees.detail, "tflite t2")) << "the pair's weaker member is no rival: " << agrees.detail;

  const std::vector<report::LoadedResult> neither{on_arm(narrow_cell("onnxruntime", 20.0, 300.0))};
  const auto without = report::recommend(neither, {});
  const auto& missing = branch(without.models[0], kScenario, "ARM edge CPU");
  EXPECT_EQ(missing.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_EQ(missing.detail, "needs a cell of this model run with -b tflite or -b ncnn");
}

TEST(RecommendDecisionTrees, EdgeCpuAgreesWhenOpenVinoLeadsAndIsContradictedOtherwise) {
  const auto rec = report::recommend(three_backends(), {});
  const auto& edge = branch(rec.models[0], kScenario, "edge CPU");
  EXPECT_EQ(edge.verdict, BranchVerdict::kAgrees);
  EXPECT_TRUE(contains(edge.detail, "measured lowest P99 latency: openvino t2 P99 ")) << edge.detail;
  EXPECT_TRUE(contains(edge.detail, "4-bit weights not measured (openvino precisions here: fp32)")) << edge.detail;

  const std::vector<report::LoadedResult> ort_faster{narrow_cell("onnxruntime", 5.0, 300.0),
                                                     narrow_cell("openvino", 10.0, 300.0)};
  const auto contradicted = report::recommend(ort_faster, {});
  const auto& check = branch(contradicted.models[0], kScenario, "edge CPU");
  EXPECT_EQ(check.verdict, BranchVerdict::kContradicted);
  EXPECT_TRUE(contains(check.detail, "(onnxruntime t2 is ")) << check.detail;
  EXPECT_TRUE(contains(report::to_markdown(contradicted), "**contradicted**")) << report::to_markdown(contradicted);

  // Within the 5% tolerance a close second still agrees.
  const std::vector<report::LoadedResult> close{narrow_cell("onnxruntime", 10.0, 300.0, 1),
                                                narrow_cell("openvino", 10.2, 300.0, 1)};
  EXPECT_EQ(branch(report::recommend(close, {}).models[0], kScenario, "edge CPU").verdict, BranchVerdict::kAgrees);
}

TEST(RecommendDecisionTrees, OpenVinosLanguageModelBackendCountsAsOpenVino) {
  auto openvino = llm_cell(60.0, 12.0, 300.0, "");  // ovllm: OpenVINO running a language model
  openvino.result.backend.name = "ovllm";
  openvino.result.requested.precision = "int4";
  openvino.path = "/results/llama-tiny.ovllm.t2.json";
  auto llama = llm_cell(120.0, 10.0, 200.0, "");
  llama.result.samples_ms = testing::scaled(llama.result.samples_ms, 2.0);
  llama.result.latency_ms = stats::summarize(llama.result.samples_ms);
  const auto rec = report::recommend({llama, openvino}, {});
  const auto& edge = branch(rec.models.at(0), kScenario, "edge CPU");
  EXPECT_EQ(edge.verdict, BranchVerdict::kAgrees) << edge.detail;
  EXPECT_TRUE(contains(edge.detail, "measured lowest P99 latency: ovllm")) << edge.detail;
  EXPECT_FALSE(contains(edge.detail, "4-bit weights not measured")) << edge.detail;  // int4 ran
}

TEST(RecommendDecisionTrees, OneFrameworkMeasuredAgreesOnlyTrivially) {
  const auto only_openvino = report::recommend({narrow_cell("openvino", 10.0, 300.0)}, {});
  const auto& edge = branch(only_openvino.models[0], kScenario, "edge CPU");
  EXPECT_EQ(edge.verdict, BranchVerdict::kAgreesTrivially);
  EXPECT_TRUE(contains(edge.detail, "only openvino was measured")) << edge.detail;

  report::Constraints c;
  c.multi_backend = true;
  const auto portable = report::recommend(three_backends(), c);
  const auto& multi = branch(portable.models[0], kWorkload, "multi-backend");
  EXPECT_EQ(multi.verdict, BranchVerdict::kAgreesTrivially);
  EXPECT_TRUE(contains(multi.detail, "onnxruntime ran this model here")) << multi.detail;
  const auto without_ort = report::recommend({narrow_cell("openvino", 10.0, 300.0)}, c);
  EXPECT_EQ(branch(without_ort.models[0], kWorkload, "multi-backend").verdict, BranchVerdict::kNotMeasuredHere);
}

TEST(RecommendDecisionTrees, HighThroughputComparesOnnxRuntimesBestRate) {
  report::Constraints c;
  c.min_qps = 10.0;
  // onnxruntime at batch 8: 8 inferences per 40 ms = 200/s against openvino's 100/s.
  const std::vector<report::LoadedResult> batched{narrow_cell("openvino", 10.0, 300.0),
                                                  narrow_cell("onnxruntime", 40.0, 300.0, 2, 8)};
  const auto agrees = branch(report::recommend(batched, c).models[0], kScenario, "high-throughput batch");
  EXPECT_EQ(agrees.verdict, BranchVerdict::kAgrees);
  EXPECT_TRUE(contains(agrees.detail, "max_batch_size 32 not measured (largest onnxruntime batch here: 8")) << agrees.detail;

  const std::vector<report::LoadedResult> slow{narrow_cell("openvino", 10.0, 300.0),
                                               narrow_cell("onnxruntime", 400.0, 300.0, 2, 8)};
  EXPECT_EQ(branch(report::recommend(slow, c).models[0], kScenario, "high-throughput batch").verdict,
            BranchVerdict::kContradicted);

  const auto missing =
      branch(report::recommend({narrow_cell("openvino", 10.0, 300.0)}, c).models[0], kScenario, "high-throughput batch");
  EXPECT_EQ(missing.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_EQ(missing.detail, "needs a cell of this model run with -b onnxruntime --batch 32");
}

TEST(RecommendDecisionTrees, DynamicShapesCompareTheSlowdownPerUnitOfWork) {
  report::Constraints c;
  c.dynamic_shapes = true;
  auto cells = shape_pair("onnxruntime", 1.06);
  const auto openvino = shape_pair("openvino", 1.15);
  cells.insert(cells.end(), openvino.begin(), openvino.end());
  const auto agrees = branch(report::recommend(cells, c).models[0], kPriority, "dynamic shapes");
  EXPECT_EQ(agrees.verdict, BranchVerdict::kAgrees);
  EXPECT_EQ(agrees.detail,
            "measured slowdown per unit of work with shapes varying per query: onnxruntime t2 input=1x3x160..288x160..288 "
            "1.06x vs openvino t2 input=1x3x160..288x160..288 1.15x");

  auto reversed = shape_pair("onnxruntime", 1.30);
  const auto openvino_steady = shape_pair("openvino", 1.02);
  reversed.insert(reversed.end(), openvino_steady.begin(), openvino_steady.end());
  EXPECT_EQ(branch(report::recommend(reversed, c).models[0], kPriority, "dynamic shapes").verdict, BranchVerdict::kContradicted);

  // Fixed-shape runs only: the cliff was not measured.
  const auto unmeasured = branch(report::recommend(three_backends(), c).models[0], kPriority, "dynamic shapes");
  EXPECT_EQ(unmeasured.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_TRUE(contains(unmeasured.detail, "--shape-range")) << unmeasured.detail;
}

TEST(RecommendLlm, TtftAndTpotLimitsJudgeLlmCellsOnly) {
  const std::vector<report::LoadedResult> cells{llm_cell(120.0, 10.0, 200.0, ""), narrow_cell("onnxruntime", 10.0, 300.0)};
  report::Constraints c;
  c.ttft_ms = 300.0;
  c.tpot_ms = 5.0;
  const auto rec = report::recommend(cells, c);
  ASSERT_EQ(rec.models.size(), 2u);  // llama-tiny and resnet50
  const auto& llm = find(rec.models[0], "llamacpp");
  ASSERT_EQ(llm.checks.size(), 2u);
  EXPECT_EQ(llm.checks[0].constraint, "TTFT");
  EXPECT_EQ(llm.checks[0].outcome, report::Outcome::kMet);
  EXPECT_TRUE(contains(llm.checks[0].detail, " ms <= 300 ms")) << llm.checks[0].detail;
  EXPECT_EQ(llm.checks[1].outcome, report::Outcome::kFailed);
  EXPECT_TRUE(contains(llm.binding(), "TPOT P99 10.")) << llm.binding();
  EXPECT_TRUE(find(rec.models[1], "onnxruntime").checks.empty());               // not an LLM cell: no TTFT to judge
  EXPECT_FALSE(branch(rec.models[1], kWorkload, "long generation").selected);   // --ttft-ms concerns LLM cells only
  EXPECT_FALSE(branch(rec.models[0], kWorkload, "fixed input size").selected);  // prompt lengths vary

  const auto& generation = branch(rec.models[0], kWorkload, "long generation");
  EXPECT_EQ(generation.selected_by, "--ttft-ms");
  EXPECT_EQ(generation.verdict, BranchVerdict::kNotMeasuredHere);
  EXPECT_TRUE(contains(generation.detail, "vLLM server")) << generation.detail;
  EXPECT_TRUE(contains(generation.detail, "lowest TTFT: llamacpp t2 TTFT P99 1")) << generation.detail;
  EXPECT_TRUE(contains(generation.detail,
                       "(baselines of \u201cAI model inference framework performance testing, a panoramic analysis\u201d: TTFT "
                       "300 ms, P99 500 ms"))
      << generation.detail;
  EXPECT_EQ(branch(report::recommend({llm_cell(120.0, 10.0, 200.0, "")}, {}).models[0], kWorkload, "long generation").selected_by,
            "LLM generation results");
}

TEST(RecommendLlm, MemoryPerBillionParametersWhereTheParameterCountWasRecorded) {
  // 2.4 GB (2457.6 MiB) for 2 B parameters: the performance-testing guide's 1.2 GB per B.
  const auto recorded = llm_cell(100.0, 10.0, 2457.6, "2000000000");
  ASSERT_TRUE(report::gb_per_billion_parameters(recorded.result).has_value());
  EXPECT_NEAR(*report::gb_per_billion_parameters(recorded.result), 1.2, 1e-12);
  const auto unrecorded = llm_cell(100.0, 10.0, 2457.6, "", "4");
  EXPECT_FALSE(report::gb_per_billion_parameters(unrecorded.result).has_value());

  const auto table = report::generation_table({recorded.result, unrecorded.result});
  EXPECT_TRUE(contains(table, "GB per B params")) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| +2\.40 \| +1\.20 \|)"))) << table;

  const auto rec = report::recommend({recorded, unrecorded}, {});
  const auto& cell = find(rec.models[0], "llamacpp");
  EXPECT_TRUE(cell.figures.generation);
  const auto text = report::to_markdown(rec);
  EXPECT_TRUE(
      contains(text,
               "LLM serving, beside the baselines of *AI model inference framework performance testing, a panoramic analysis* "
               "(TTFT 300 ms, P99 500 ms, 1.2 GB per B parameters)"))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\| +2 \| +1\.20 \|)"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\| not recorded \| +- \|)"))) << text;
}

TEST(RecommendPower, WattsUnknownWithoutEnergyAndJudgedWithIt) {
  auto unmeasured = narrow_cell("onnxruntime", 10.0, 300.0);
  unmeasured.result.resources = resources(false, 0.0, 10.0);
  auto measured = narrow_cell("openvino", 10.0, 300.0);
  measured.result.resources = resources(true, 200.0, 10.0);  // 20 W
  report::Constraints c;
  c.watts = 25.0;
  const auto rec = report::recommend({unmeasured, measured}, c);
  const auto& unknown = find(rec.models[0], "onnxruntime");
  EXPECT_EQ(unknown.binding(), "power unknown: energy not measured (RAPL not readable (permission denied))");
  EXPECT_FALSE(unknown.figures.average_watts.has_value());
  const auto& met = find(rec.models[0], "openvino");
  EXPECT_TRUE(met.meets_all());
  EXPECT_DOUBLE_EQ(*met.figures.average_watts, 20.0);
  EXPECT_EQ(met.checks[0].detail, "average power 20.00 W <= 25 W");

  c.watts = 15.0;
  const auto tight = report::recommend({measured}, c);
  EXPECT_EQ(find(tight.models[0], "openvino").binding(), "average power 20.00 W > 15 W");
  EXPECT_FALSE(tight.every_model_has_a_pick());
}

TEST(RecommendMachines, ResultsFromTwoHostsGetOneRecommendationEachAndAMatrix) {
  auto a_ort = narrow_cell("onnxruntime", 10.0, 300.0), a_ov = narrow_cell("openvino", 20.0, 300.0);
  auto b_ort = narrow_cell("onnxruntime", 30.0, 300.0), b_ov = narrow_cell("openvino", 15.0, 300.0);
  for (auto* r : {&a_ort, &a_ov}) r->result.environment["hostname"] = "alpha";
  for (auto* r : {&b_ort, &b_ov}) {
    r->result.environment["hostname"] = "beta";
    r->path = "/results/beta/" + r->result.backend.name + ".json";
  }
  EXPECT_EQ(report::machine_key(a_ort.result), "alpha (Test CPU)");
  EXPECT_EQ(report::group_by_machine({a_ort, b_ort, a_ov}).at("alpha (Test CPU)").size(), 2u);

  const auto rec = report::recommend({a_ort, a_ov, b_ort, b_ov}, {});
  ASSERT_EQ(rec.models.size(), 2u);
  EXPECT_EQ(rec.models[0].machine, "alpha (Test CPU)");
  EXPECT_EQ(rec.models[0].ranked.front().backend, "onnxruntime");
  EXPECT_EQ(rec.models[1].machine, "beta (Test CPU)");
  EXPECT_EQ(rec.models[1].ranked.front().backend, "openvino");
  ASSERT_TRUE(rec.machine_matrix.has_value());
  const auto& matrix = *rec.machine_matrix;
  EXPECT_EQ(matrix.machines, (std::vector<std::string>{"alpha (Test CPU)", "beta (Test CPU)"}));
  ASSERT_EQ(matrix.rows.size(), 2u);
  EXPECT_EQ(matrix.rows[0].cell, "onnxruntime t2");
  EXPECT_TRUE(matrix.rows[0].values[0].ends_with(" ms (pick)")) << matrix.rows[0].values[0];
  EXPECT_FALSE(matrix.rows[0].values[1].ends_with("(pick)")) << matrix.rows[0].values[1];
  const auto text = report::to_markdown(rec);
  EXPECT_TRUE(contains(text, "## resnet50 on beta (Test CPU)")) << text;
  EXPECT_TRUE(contains(text, "## Which framework on which machine")) << text;

  const auto json = report::to_json(rec);
  EXPECT_EQ(json["models"][1]["machine"], "beta (Test CPU)");
  EXPECT_EQ(json["machine_matrix"]["machines"].size(), 2u);

  const auto single = report::to_json(report::recommend({a_ort, a_ov}, {}));
  EXPECT_EQ(single["models"][0]["machine"], "");
  EXPECT_TRUE(single["machine_matrix"].is_null());
}

TEST(RecommendMachines, MissingEnvironmentFieldsAreNamedUnknown) {
  auto r = narrow_cell("onnxruntime", 10.0, 300.0);
  r.result.environment = nlohmann::json::object();
  EXPECT_EQ(report::machine_key(r.result), "unknown host (unknown CPU)");
  r.result.environment = {{"hostname", "vm"}, {"cpu_model", "unavailable"}};
  EXPECT_EQ(report::machine_key(r.result), "vm (unknown CPU)");
}

TEST(RecommendDecisionTrees, JsonCarriesEveryBranchWithTheAgreedNames) {
  report::Constraints c;
  c.p99_ms = 100.0;
  const auto json = report::to_json(report::recommend(three_backends(), c));
  const auto& branches = json["models"][0]["decision_tree_branches"];
  ASSERT_EQ(branches.size(), 14u);
  const auto& first = branches[0];
  for (const char* key :
       {"tree", "guide", "section", "branch", "recommends", "alternative", "selected", "selected_by", "verdict", "detail"})
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_EQ(first.size(), 10u);
  EXPECT_EQ(first["tree"], "Which framework for the deployment scenario");
  EXPECT_EQ(first["guide"], "AI model inference framework performance evaluation");
  EXPECT_EQ(first["section"], "decision tree §5");
  EXPECT_EQ(first["branch"], "latency-critical");
  EXPECT_EQ(first["recommends"], "TensorRT");
  EXPECT_EQ(first["selected"], true);
  EXPECT_EQ(first["selected_by"], "--p99-ms");
  EXPECT_EQ(first["verdict"], "not measured here");
  std::set<std::string> verdicts;
  for (const auto& b : branches) verdicts.insert(b["verdict"].get<std::string>());
  EXPECT_TRUE(verdicts.contains("not selected"));
  EXPECT_TRUE(verdicts.contains("agrees"));  // edge CPU: openvino leads
}

TEST(RecommendDecisionTrees, MarkdownListsSelectedBranchesFirstThenTheOthersInATable) {
  report::Constraints c;
  c.p99_ms = 100.0;
  const auto text = report::to_markdown(report::recommend(three_backends(), c));
  const auto section = text.find("### Decision trees of the field guides");
  ASSERT_NE(section, std::string::npos) << text;
  // Each tree is named by what it decides and cited by its guide's title and section, once.
  for (const char* tree :
       {"- Which framework for the deployment scenario: *AI model inference framework performance evaluation*, decision "
        "tree §5\n",
        "- Which framework to choose, in priority order: *AI model inference framework selection and practice guide*, "
        "decision path §6 (a priority order: only its first matching branch applies)\n",
        "- Which engine for the model and workload: *AI model inference framework performance testing, a panoramic "
        "analysis*, LLM decision tree §6\n"})
    EXPECT_NE(text.find(tree, section), std::string::npos) << tree << "\n" << text;
  const auto selected = text.find(
      "- Which framework for the deployment scenario: latency-critical → TensorRT (alternative: FastDeploy, CUDA Graph on), "
      "selected by --p99-ms: **not measured here**: needs an NVIDIA GPU");
  EXPECT_NE(selected, std::string::npos) << text;
  const auto table = text.find("Not selected:", section);
  EXPECT_LT(selected, table);
  EXPECT_TRUE(std::regex_search(text.substr(table),
                                std::regex(R"(\| Which framework for the deployment scenario +\| high-throughput batch +\|)")))
      << text;
}

}  // namespace
}  // namespace infermark

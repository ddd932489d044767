#include "report/recommend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "report/decision_tree_verdicts.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using testing::latency_samples;
using testing::narrow_cell;
using testing::synthetic_result;

const report::CellAssessment& find(const report::ModelRecommendation& m, const std::string& backend) {
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& c : *list)
      if (c.backend == backend) return c;
  throw std::out_of_range(backend);
}

// openvino fastest, onnxruntime next, opencv slowest but smallest.
std::vector<report::LoadedResult> three_backends() {
  return {narrow_cell("onnxruntime", 20.0, 300.0), narrow_cell("openvino", 10.0, 500.0), narrow_cell("opencv", 50.0, 100.0)};
}

// Cells of different batch sizes rank together, and the explanation says their latency is per
// query of that many rows; cells of one batch size say nothing of it.
TEST(RecommendBatches, AMixOfBatchSizesIsSaidInTheExplanation) {
  const auto mixed =
      report::recommend({narrow_cell("onnxruntime", 20.0, 300.0, 1, 1), narrow_cell("openvino", 60.0, 300.0, 2, 7)}, {});
  ASSERT_EQ(mixed.models.size(), 1u);
  const auto& why = mixed.models[0].explanation;
  EXPECT_TRUE(std::any_of(why.begin(), why.end(), [](const std::string& line) {
    return line.starts_with("These cells ran different batch sizes (1, 7): latency is per query of that many rows");
  })) << report::to_markdown(mixed);
  const auto single = report::recommend(three_backends(), {});
  for (const auto& line : single.models[0].explanation) EXPECT_EQ(line.find("batch sizes"), std::string::npos) << line;
}

TEST(RecommendConstraints, CellsPastALimitAreRuledOutWithTheConstraintNamed) {
  report::Constraints c;
  c.p99_ms = 30.0;
  const auto rec = report::recommend(three_backends(), c);
  ASSERT_EQ(rec.models.size(), 1u);
  const auto& m = rec.models[0];
  ASSERT_EQ(m.ranked.size(), 2u);
  ASSERT_EQ(m.rejected.size(), 1u);
  EXPECT_EQ(m.rejected[0].backend, "opencv");
  EXPECT_TRUE(std::regex_match(m.rejected[0].binding(), std::regex(R"(P99 5\d\.\d+ ms > 30 ms)"))) << m.rejected[0].binding();
  EXPECT_TRUE(rec.every_model_has_a_pick());
  const auto text = report::to_markdown(rec);
  EXPECT_NE(text.find("Ruled out:\n- opencv t2: P99 "), std::string::npos) << text;
}

TEST(RecommendConstraints, TheBindingConstraintIsTheOneFurthestPastItsLimit) {
  report::Constraints c;
  c.p99_ms = 45.0;  // opencv misses by ~15%
  c.mem_mb = 50.0;  // and every cell by far more on memory
  const auto rec = report::recommend(three_backends(), c);
  const auto& opencv = find(rec.models[0], "opencv");
  EXPECT_EQ(opencv.binding(), "peak RSS 100.0 MB > 50 MB");
  EXPECT_EQ(find(rec.models[0], "openvino").binding(), "peak RSS 500.0 MB > 50 MB");
}

TEST(RecommendConstraints, AccuracyLossComesFromTheCrossCheckAndIsUnknownWithoutOne) {
  auto fp16 = narrow_cell("openvino", 10.0, 200.0);
  fp16.result.cross_check = result::CrossCheck{"onnxruntime", "ref.json", false, {}, {}};
  stats::OutputAgreement logits;
  logits.output = "logits";
  logits.cosine_similarity = 0.9999;
  logits.top1_agreement = 0.98;
  fp16.result.cross_check->outputs.push_back(logits);
  auto unchecked = narrow_cell("opencv", 12.0, 200.0);
  report::Constraints c;
  c.max_accuracy_loss_pct = 1.0;
  const auto rec = report::recommend({fp16, unchecked}, c);
  const auto& ov = find(rec.models[0], "openvino");
  ASSERT_TRUE(ov.figures.accuracy_loss.has_value());
  EXPECT_NEAR(*ov.figures.accuracy_loss, 0.02, 1e-12);
  EXPECT_EQ(ov.binding(), "accuracy loss 2% > 1% (1 - top-1 agreement with onnxruntime)");
  EXPECT_NE(find(rec.models[0], "opencv").binding().find("accuracy loss cannot be judged"), std::string::npos);
  EXPECT_FALSE(rec.every_model_has_a_pick());
}

TEST(RecommendConstraints, PipelineModesAreJudgedAgainstTheSerialModesOutputs) {
  // A pipeline's modes run the same stages: serial is the reference, a mode whose last outputs
  // equal serial's loses nothing, one whose outputs differ cannot be judged.
  const auto mode = [](const std::string& backend, double ms, result::PipelineMode m, std::optional<double> diff) {
    auto cell = narrow_cell(backend, ms, 200.0);
    cell.result.pipeline.emplace();
    cell.result.pipeline->mode = m;
    cell.result.pipeline->max_abs_diff_vs_serial = diff;
    return cell;
  };
  report::Constraints c;
  c.max_accuracy_loss_pct = 1.0;
  const auto rec = report::recommend(
      {mode("onnxruntime", 30.0, result::PipelineMode::kSerial, std::nullopt),
       mode("openvino", 20.0, result::PipelineMode::kThreads, 0.0), mode("opencv", 10.0, result::PipelineMode::kProcesses, 0.5)},
      c);
  ASSERT_EQ(rec.models.size(), 1u);
  EXPECT_EQ(find(rec.models[0], "onnxruntime").figures.accuracy_loss, 0.0);
  EXPECT_EQ(find(rec.models[0], "openvino").figures.accuracy_loss, 0.0);
  EXPECT_NE(find(rec.models[0], "opencv").binding().find("differ from the serial mode's by up to 0.5"), std::string::npos)
      << find(rec.models[0], "opencv").binding();
  EXPECT_TRUE(rec.every_model_has_a_pick());
}

TEST(RecommendConstraints, TokenEmbeddingsAreJudgedByTheirVectorsCosineNotATop1OverHiddenUnits) {
  auto int8 = narrow_cell("onnxruntime", 10.0, 200.0);
  int8.result.cross_check = result::CrossCheck{"onnxruntime", "ref.json", false, {}, {}};
  // A top-1 (argmax over hidden units) of 80% means nothing for an embedding; its vectors' cosine does.
  int8.result.cross_check->outputs.push_back({"last_hidden_state", true, "", 0.5, 0.03, 0.987, 0.80, 0.99, 0.95});
  report::Constraints c;
  c.max_accuracy_loss_pct = 0.5;
  const auto rec = report::recommend({int8}, c);
  const auto& cell = find(rec.models[0], "onnxruntime");
  ASSERT_TRUE(cell.figures.accuracy_loss.has_value());
  EXPECT_NEAR(*cell.figures.accuracy_loss, 0.01, 1e-12);
  EXPECT_EQ(cell.binding(), "accuracy loss 1% > 0.5% (1 - mean vector cosine with onnxruntime)");
}

TEST(RecommendConstraints, EnergyWithoutAMeasurementIsReportedButExcludesNothing) {
  auto r = narrow_cell("onnxruntime", 10.0, 100.0);
  result::ResourceRecord resources;
  resources.summary.energy = {false, "RAPL not readable", 0.0};
  r.result.resources = resources;
  report::Constraints c;
  c.energy = true;
  const auto rec = report::recommend({r}, c);
  ASSERT_EQ(rec.models[0].ranked.size(), 1u);
  const auto& checks = rec.models[0].ranked[0].checks;
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].detail, "energy cannot be judged: RAPL not readable");
  EXPECT_EQ(rec.models[0].objective, "lowest P99 latency");
  EXPECT_NE(report::to_markdown(rec).find("Energy cannot be judged (RAPL not readable)"), std::string::npos);
}

TEST(RecommendRanking, LatencyByDefaultThroughputWhenOnlyARateIsAsked) {
  const auto by_latency = report::recommend(three_backends(), {});
  const auto& m = by_latency.models[0];
  EXPECT_EQ(m.objective, "lowest P99 latency");
  ASSERT_EQ(m.ranked.size(), 3u);
  EXPECT_EQ(m.ranked[0].backend, "openvino");
  EXPECT_EQ(m.ranked[1].backend, "onnxruntime");
  EXPECT_EQ(m.explanation[0].substr(0, 16), "Pick openvino t2");

  auto batched = narrow_cell("onnxruntime", 60.0, 300.0, 2, 8);  // slower per query, 8 inferences each
  report::Constraints rate;
  rate.min_qps = 50.0;
  const auto by_rate = report::recommend({narrow_cell("openvino", 10.0, 500.0), batched}, rate);
  EXPECT_EQ(by_rate.models[0].objective, "highest throughput");
  EXPECT_EQ(by_rate.models[0].ranked[0].batch, 8);
}

TEST(RecommendRanking, TiesGoToTheSmallerFootprint) {
  const auto samples = latency_samples(200, 10.0, 1);
  const std::vector<report::LoadedResult> tied{synthetic_result(samples, {.backend = "onnxruntime", .peak_rss_mb = 400.0}),
                                               synthetic_result(samples, {.backend = "openvino", .peak_rss_mb = 200.0})};
  EXPECT_EQ(report::recommend(tied, {}).models[0].ranked[0].backend, "openvino");
}

TEST(RecommendCost, CostPerMillionAndMachineCount) {
  auto r = narrow_cell("onnxruntime", 1.0, 100.0);
  r.result.throughput.inferences_per_s = 1000.0;
  auto searched = narrow_cell("openvino", 1.0, 100.0);
  searched.result.throughput.inferences_per_s = 1000.0;
  searched.result.analysis.search = loadgen::MaxQpsSearchResult{.max_qps_within_sla = 600.0};
  report::Constraints c;
  c.price_per_hour = 3.6;
  c.target_qps = 2500.0;
  const auto rec = report::recommend({r, searched}, c);
  const auto& plain = find(rec.models[0], "onnxruntime");
  EXPECT_DOUBLE_EQ(*plain.cost_per_million, 1.0);  // 3.6 / (3600 x 1000) x 1e6
  EXPECT_EQ(*plain.machines, 3);                   // ceil(2500 / 1000)
  EXPECT_EQ(plain.figures.qps_source, "measured inferences/s");
  const auto& sla = find(rec.models[0], "openvino");
  EXPECT_EQ(*sla.machines, 5);  // ceil(2500 / 600)
  EXPECT_EQ(sla.figures.qps_source, "max QPS within the SLA (searched)");
  EXPECT_DOUBLE_EQ(*sla.cost_per_million, 1.0);  // cost uses the measured inferences/s
}

TEST(RecommendCost, GflopsAndShareOfPeak) {
  auto r = narrow_cell("onnxruntime", 100.0, 100.0);
  r.result.throughput.inferences_per_s = 10.0;
  report::Constraints c;
  c.model_gflops = 4.0;
  const auto rec = report::recommend({r}, c, probes::PeakFlops{400.0, "given", ""});
  EXPECT_DOUBLE_EQ(*rec.models[0].ranked[0].gflops, 40.0);
  EXPECT_DOUBLE_EQ(*rec.models[0].ranked[0].percent_of_peak, 10.0);
}

TEST(RecommendCost, ModelFlopsComeFromTheZooManifestWhenNotGiven) {
  const auto dir = std::filesystem::temp_directory_path() / "infermark_recommend_manifest";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "net.json") << R"({"name": "net", "gflops_per_inference": 2.0})";
  auto r = narrow_cell("onnxruntime", 100.0, 100.0);
  r.result.model.path = (dir / "net.onnx").string();
  r.result.throughput.inferences_per_s = 10.0;
  const auto rec = report::recommend({r}, {}, probes::PeakFlops{40.0, "given", ""});
  const auto& assessed = rec.models[0].ranked[0];
  EXPECT_DOUBLE_EQ(*assessed.gflops, 20.0);
  EXPECT_DOUBLE_EQ(*assessed.percent_of_peak, 50.0);
  EXPECT_EQ(assessed.figures.gflops_source, "zoo manifest " + (dir / "net.json").string());
  EXPECT_NE(report::to_markdown(rec).find("2 GFLOP per inference (zoo manifest"), std::string::npos);
  report::Constraints given;
  given.model_gflops = 4.0;  // the flag wins over the manifest
  EXPECT_DOUBLE_EQ(*report::recommend({r}, given).models[0].ranked[0].gflops, 40.0);
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(report::recommend({r}, {}).models[0].ranked[0].gflops.has_value());  // no manifest, no FLOPs
}

TEST(RecommendPeakFlops, DerivedFromCoresClockAndSimdFlags) {
  EXPECT_DOUBLE_EQ(probes::peak_gflops(2, 2500.0, "avx avx2 avx512f fma", "test").gflops, 320.0);  // 2 x 2.5 GHz x 64
  EXPECT_DOUBLE_EQ(probes::peak_gflops(4, 3000.0, "avx avx2 fma", "test").gflops, 384.0);          // 4 x 3 GHz x 32
  EXPECT_DOUBLE_EQ(probes::peak_gflops(1, 1000.0, "sse4_1 sse4_2", "test").gflops, 8.0);
  EXPECT_NE(probes::peak_gflops(2, 2500.0, "avx512f", "cpuinfo").derivation.find("2 physical cores x 2500 MHz"),
            std::string::npos);
}

TEST(RecommendNoneMeet, EmptyRankingWithAReasonForEveryCell) {
  report::Constraints c;
  c.p99_ms = 1e-6;
  const auto rec = report::recommend(three_backends(), c);
  const auto& m = rec.models[0];
  EXPECT_TRUE(m.ranked.empty());
  ASSERT_EQ(m.rejected.size(), 3u);
  for (const auto& cell : m.rejected)
    EXPECT_TRUE(std::regex_match(cell.binding(), std::regex(R"(P99 \S+ ms > 1e-06 ms)"))) << cell.binding();
  EXPECT_FALSE(rec.every_model_has_a_pick());
  EXPECT_EQ(m.explanation[0], "No cell meets every constraint.");
  const auto json = report::to_json(rec);
  EXPECT_TRUE(json["models"][0]["pick"].is_null());
  EXPECT_FALSE(json["every_model_has_a_pick"].get<bool>());
}

TEST(RecommendNoneMeet, AFailedCellIsRuledOutByItsStatus) {
  auto crashed = narrow_cell("openvino", 10.0, 100.0);
  crashed.result.status = infermark::result::CellStatus::kCrashed;
  crashed.result.error = "crashed: SIGSEGV while running";
  crashed.result.latency_ms.reset();
  const auto rec = report::recommend({crashed, narrow_cell("onnxruntime", 20.0, 100.0)}, {});
  ASSERT_EQ(rec.models[0].ranked.size(), 1u);
  EXPECT_EQ(rec.models[0].rejected[0].binding(), "crashed: SIGSEGV while running");
}

// Served variants (server-side latency, 5 and 6 ms) beside in-process cells (10 and 20 ms): a served
// latency times another span, so it must not win, or lose, the in-process ranking.
std::vector<report::LoadedResult> served_beside_in_process() {
  const auto served = [](const std::string& backend, double median_ms) {
    return synthetic_result(latency_samples(500, median_ms, 7, 0.02),
                            {.backend = backend, .origin = result::ResultOrigin::kServed});
  };
  return {narrow_cell("onnxruntime", 20.0, 300.0), narrow_cell("openvino", 10.0, 500.0), served("onnxruntime", 5.0),
          served("openvino", 6.0)};
}

report::Constraints p99_within_100_ms() {
  report::Constraints c;
  c.p99_ms = 100.0;
  return c;
}

bool compared(const report::DecisionTreeCheck& check) {
  return check.verdict == report::BranchVerdict::kAgrees || check.verdict == report::BranchVerdict::kContradicted;
}

const report::ModelRecommendation& of_origin(const report::Recommendation& rec, result::ResultOrigin origin) {
  for (const auto& m : rec.models)
    if (m.origin == origin) return m;
  throw std::out_of_range(std::string(name_of(origin)));
}

TEST(RecommendOrigins, AServedAndAnInProcessCellAreRankedApartAndTheOutputSaysSo) {
  const auto rec = report::recommend(served_beside_in_process(), p99_within_100_ms());
  ASSERT_EQ(rec.models.size(), 2u);
  const auto& in_process = of_origin(rec, result::ResultOrigin::kInProcess);
  const auto& served = of_origin(rec, result::ResultOrigin::kServed);
  ASSERT_EQ(in_process.ranked.size(), 2u);
  EXPECT_EQ(in_process.ranked.front().backend, "openvino");
  EXPECT_TRUE(in_process.rejected.empty());
  ASSERT_EQ(served.ranked.size(), 2u);
  EXPECT_EQ(served.ranked.front().backend, "onnxruntime");
  EXPECT_TRUE(served.origin_named && in_process.origin_named);
  ASSERT_FALSE(rec.notes.empty());
  EXPECT_NE(rec.notes.back().find("these results mix origins (in_process, served)"), std::string::npos) << rec.notes.back();
  EXPECT_EQ(served.explanation.back(),
            "Only served results are ranked here (server-side latency of infermark serve, request parsed to response "
            "ready); other origins are ranked in their own sections.");

  const auto markdown = report::to_markdown(rec);
  EXPECT_NE(markdown.find("## resnet50 (in_process)\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("## resnet50 (served)\n"), std::string::npos) << markdown;
  const auto json = report::to_json(rec);
  EXPECT_EQ(json["models"][0]["origin"], "in_process");
  EXPECT_EQ(json["models"][1]["origin"], "served");
  EXPECT_TRUE(json["models"][1]["origin_named"].get<bool>());

  // The decision-tree branches of each section compare only that section's cells, and say whose.
  for (const auto& branch : in_process.decision_tree_branches)
    EXPECT_EQ(branch.detail.find(" serve"), std::string::npos) << branch.detail;
  const auto judged = std::find_if(served.decision_tree_branches.begin(), served.decision_tree_branches.end(), compared);
  ASSERT_NE(judged, served.decision_tree_branches.end());
  EXPECT_NE(judged->detail.find("measured lowest P99 latency among served results: openvino t2"), std::string::npos)
      << judged->detail;
}

TEST(RecommendOrigins, ResultsOfOneOriginNameNone) {
  const auto rec = report::recommend(three_backends(), {});
  ASSERT_EQ(rec.models.size(), 1u);
  EXPECT_FALSE(rec.models[0].origin_named);
  EXPECT_TRUE(rec.notes.empty());
  EXPECT_NE(report::to_markdown(rec).find("## resnet50\n"), std::string::npos);
}

// Given cells of several origins directly, the verdicts still compare only the inputs' origin.
TEST(RecommendOrigins, DecisionTreeVerdictsLeaveOtherOriginsOut) {
  const auto results = served_beside_in_process();
  const auto constraints = p99_within_100_ms();
  const auto rec = report::recommend(results, constraints);
  std::vector<const report::CellAssessment*> completed;
  for (const auto& m : rec.models)
    for (const auto& cell : m.ranked) completed.push_back(&cell);
  const auto checks = report::check_decision_tree_branches(
      {constraints, completed, results, report::Objective::kLatency, result::ResultOrigin::kInProcess});
  EXPECT_TRUE(std::any_of(checks.begin(), checks.end(), compared)) << "no branch compared the in-process cells";
  for (const auto& check : checks) EXPECT_EQ(check.detail.find(" serve"), std::string::npos) << check.detail;
}

}  // namespace
}  // namespace infermark

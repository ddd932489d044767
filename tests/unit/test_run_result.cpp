#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/comparison_table.hpp"
#include "result/run_result.hpp"

namespace infermark::result {
namespace {

result::RunResult sample_result() {
  result::RunResult r;
  r.started_at = "2026-12-02T10:00:00Z";
  r.isolation = "worker process";
  r.model = {"models/m.onnx",
             "m",
             "onnx",
             1234,
             {{"input", DType::kFloat32, {-1, 3}, {"batch", ""}}},
             {{"logits", DType::kFloat32, {-1, 10}, {"batch", ""}}},
             {{"logits", OutputKind::kClassScores}}};
  r.backend = {"onnxruntime", "ONNX Runtime", "1.30.0", {"onnx"}, {"cpu"}, "npm", {}};
  r.requested.intra_op_threads = 2;
  r.requested.extras["spinning"] = "off";
  r.effective_settings = {{"intra_op_threads", "2", "2", SettingState::kVerified, "counted"},
                          {"precision", "bf16", "fp32", SettingState::kNotApplied, "not supported"}};
  r.scenario.inputs = {{"input", DType::kFloat32, {1, 3}, {}}};
  r.samples_ms = {1.0, 2.0, 3.0, 4.0};
  r.latency_ms = stats::summarize(r.samples_ms);
  r.throughput = {0.01, 400.0, 400.0};
  r.memory = {10, 20, 30, "worker process", std::nullopt};
  r.environment = {{"cpu_model", "test"}};
  r.analysis.sla = loadgen::SlaVerdict{.p99_ms_target = 50.0, .p99_ms = 4.0, .passed = true, .goodput_qps = 400.0};
  return r;
}

std::string error_of(const nlohmann::json& j) {
  try {
    result::run_result_from_json(j, "r.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RunResult, JsonRoundTripKeepsEveryField) {
  const auto original = sample_result();
  const auto json = to_json(original);
  EXPECT_EQ(json["schema"], result::kSchemaName);
  EXPECT_EQ(json["schema_version"], result::kSchemaVersion);
  const auto back = result::run_result_from_json(json, "test");
  EXPECT_EQ(to_json(back), json);
  ASSERT_TRUE(back.latency_ms.has_value());
  EXPECT_DOUBLE_EQ(back.latency_ms->at(50).value, 2.0);
  EXPECT_EQ(back.effective_settings[0].state, SettingState::kVerified);
  EXPECT_FALSE(back.effective_settings[1].applied());
  EXPECT_EQ(json["latency_ms"]["percentiles"]["p99.9"]["percentile"], 99.9);
  ASSERT_TRUE(back.analysis.sla.has_value());
  EXPECT_EQ(back.analysis.sla->p99_ms_target, 50.0);
}

// The analysis is read leniently: a verdict this build cannot read is left out, the file still loads.
TEST(RunResult, AMalformedAnalysisDoesNotRejectTheFile) {
  auto json = to_json(sample_result());
  json["analysis"]["pulse"] = "recovered";
  json["analysis"]["soak"] = {{"memory", {{"verdict", "sideways"}}}};
  result::RunResult back;
  ASSERT_NO_THROW(back = result::run_result_from_json(json, "r.json"));
  EXPECT_TRUE(back.analysis.sla.has_value());
  EXPECT_FALSE(back.analysis.pulse || back.analysis.soak);
  json["analysis"] = "none";
  ASSERT_NO_THROW(back = result::run_result_from_json(json, "r.json"));
  EXPECT_FALSE(back.analysis.sla.has_value());
  json.erase("analysis");
  ASSERT_NO_THROW(back = result::run_result_from_json(json, "r.json"));
  EXPECT_EQ(to_json(back)["analysis"], nlohmann::json::object());
}

TEST(RunResult, FailedResultHasNullLatency) {
  result::RunResult failed;
  failed.status = infermark::result::CellStatus::kCrashed;
  failed.error = "crashed: SIGSEGV while loading the model";
  const auto json = to_json(failed);
  EXPECT_TRUE(json["latency_ms"].is_null());
  EXPECT_FALSE(result::run_result_from_json(json, "x").latency_ms.has_value());
}

TEST(RunResult, RejectsWhatIsNotAResult) {
  EXPECT_NE(error_of({{"hello", 1}}).find("r.json: not an infermark run result"), std::string::npos);
  auto newer = to_json(sample_result());
  newer["schema_version"] = result::kSchemaVersion + 1;
  EXPECT_NE(error_of(newer).find("newer than this infermark reads"), std::string::npos);
  auto missing = to_json(sample_result());
  missing.erase("memory");
  EXPECT_NE(error_of(missing).find("r.json: malformed run result"), std::string::npos);
}

// Served traffic's details (variant, weight, batching, shadow comparisons) and a pipeline's mode and
// breaker are typed in memory and written with the keys and values a version-1 file has.
TEST(RunResult, ServedAndPipelineDetailsAreTypedAndWrittenAsBefore) {
  auto served = to_json(sample_result());
  served["scenario"]["name"] = "serve";
  served["scenario"]["parameters"] = {
      {"variant", "ov"},
      {"weight", 10.0},
      {"instances", 2},
      {"max_batch_size", 8},
      {"max_queue_delay_us", 500},
      {"inline_below_us", 200.0},
      {"batching_note", ""},
      {"errors", 3},
      {"rows", 120},
      {"latency_measured", "server side"},
      {"shadow",
       {{"ort",
         {{"by_shape", {{{"shape", "1x3"}, {"compared", 5}, {"disagreed", 1}, {"max_abs_error", 0.5}}}}, {"dropped", 2}}}}}};
  served["schema_version"] = 1;
  const auto back = result::run_result_from_json(served, "served.json");
  EXPECT_TRUE(is_served(back.scenario));
  ASSERT_TRUE(back.scenario.parameters.serving);
  const auto& serving = *back.scenario.parameters.serving;
  EXPECT_EQ(serving.variant, "ov");
  EXPECT_DOUBLE_EQ(serving.weight, 10.0);
  EXPECT_EQ(serving.instances, 2);
  EXPECT_EQ(serving.rows, 120u);
  ASSERT_EQ(serving.shadow.at("ort").by_shape.size(), 1u);
  EXPECT_EQ(serving.shadow.at("ort").by_shape[0].disagreed, 1u);
  EXPECT_EQ(serving.shadow.at("ort").dropped, 2u);
  EXPECT_TRUE(back.scenario.parameters.extra.empty());  // nothing left untyped
  auto written = to_json(back);
  EXPECT_EQ(written["scenario"], served["scenario"]);

  auto wrong = served;
  wrong["scenario"]["parameters"]["rows"] = "many";
  try {
    result::run_result_from_json(wrong, "served.json");
    FAIL() << "a row count that is text was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scenario.parameters.rows"), std::string::npos) << e.what();
  }
  auto pipeline = to_json(sample_result());
  pipeline["scenario"]["name"] = "pipeline-fibers";
  try {
    result::run_result_from_json(pipeline, "p.json");
    FAIL() << "an unknown pipeline mode was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fibers"), std::string::npos) << e.what();
  }
}

// Phases, the time series and the histogram are typed too: a field of the wrong kind is named.
TEST(RunResult, MeasuredPhasesAreTypedAndAWrongFieldIsNamed) {
  auto json = to_json(sample_result());
  json["phases"] = {{{"label", "rate 50/s"},
                     {"concurrency", 4},
                     {"issued", 120},
                     {"completed", 118},
                     {"errors", 1},
                     {"rejected", 1},
                     {"duration_s", 2.5},
                     {"achieved_qps", 47.2},
                     {"minimums_met", true},
                     {"interrupted", false},
                     {"target_qps", 50.0},
                     {"waited_for_lane", 3},
                     {"latency_ms", {{"p50", 1.0}, {"p90", 2.0}, {"p99", 3.0}, {"max", 4.0}, {"mean", 1.5}}},
                     {"issue_lateness_us", {{"p50", 10.0}, {"p99", 40.0}, {"max", 90.0}}},
                     {"good_queries", 118},
                     {"goodput_qps", 47.2}}};
  json["time_series"] = {{{"t_s", 0.0},
                          {"completed", 5},
                          {"errors", 0},
                          {"throughput_per_s", 5.0},
                          {"p50_ms", nullptr},
                          {"p99_ms", nullptr},
                          {"max_ms", nullptr}}};
  const auto back = result::run_result_from_json(json, "r.json");
  ASSERT_EQ(back.phases.size(), 1u);
  EXPECT_EQ(back.phases[0].issued, 120u);
  EXPECT_EQ(back.phases[0].target_qps, 50.0);
  EXPECT_EQ(back.phases[0].waited_for_lane, 3u);
  ASSERT_TRUE(back.time_series);
  EXPECT_FALSE(back.time_series->at(0).p50_ms);
  EXPECT_EQ(to_json(back), json);  // written back as read

  json["phases"][0]["issued"] = "many";
  try {
    result::run_result_from_json(json, "r.json");
    FAIL() << "an issued count that is text was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: phases[0].issued"), std::string::npos) << e.what();
  }
}

TEST(RunResult, OriginRoundTrips) {
  for (const auto origin : {result::ResultOrigin::kInProcess, result::ResultOrigin::kServed, result::ResultOrigin::kRemote}) {
    auto r = sample_result();
    r.origin = origin;
    const auto json = to_json(r);
    EXPECT_EQ(json["origin"], std::string(name_of(origin)));
    EXPECT_EQ(result::run_result_from_json(json, "r.json").origin, origin);
  }
  auto unknown = to_json(sample_result());
  unknown["origin"] = "elsewhere";
  EXPECT_NE(error_of(unknown).find("r.json: origin elsewhere: unknown (expected in_process, served, remote)"), std::string::npos)
      << error_of(unknown);
}

// Files written before "origin" existed read with the origin their other fields imply.
TEST(RunResult, AnOlderFileWithoutOriginReadsWithTheOriginItsFieldsImply) {
  const auto origin_of = [](result::RunResult r) {
    auto json = to_json(r);
    json.erase("origin");
    return result::run_result_from_json(json, "old.json").origin;
  };
  auto served = sample_result();
  served.origin = result::ResultOrigin::kRemote;  // not written: must not leak into the derivation
  served.scenario.name = std::nullopt;            // served traffic, written "serve"
  EXPECT_EQ(origin_of(served), result::ResultOrigin::kServed);
  auto remote = sample_result();
  remote.backend.name = "remote";
  EXPECT_EQ(origin_of(remote), result::ResultOrigin::kRemote);
  auto scraped = sample_result();
  scraped.remote = result::RemoteRecord{};
  scraped.remote->protocol = "kserve";
  EXPECT_EQ(origin_of(scraped), result::ResultOrigin::kRemote);
  auto in_process = sample_result();
  in_process.origin = result::ResultOrigin::kServed;
  EXPECT_EQ(origin_of(in_process), result::ResultOrigin::kInProcess);
}

TEST(RunResult, FileRoundTripAndBadFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "infermark_run_result_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "r.json").string();
  result::write_run_result(sample_result(), path);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  EXPECT_EQ(result::read_run_result(path).backend.version, "1.30.0");

  std::ofstream(dir / "garbage.json") << "{not json";
  EXPECT_THROW(result::read_run_result((dir / "garbage.json").string()), Error);
  EXPECT_THROW(result::read_run_result((dir / "absent.json").string()), Error);
  std::filesystem::remove_all(dir);
}

TEST(RunResult, TextThatIsNotUtf8IsReplacedNotAFailureToWrite) {
  // A corrupted model's framework message can carry raw bytes; the result must still be written.
  const auto dir = std::filesystem::temp_directory_path() / "infermark_run_result_utf8_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "r.json").string();
  auto r = sample_result();
  r.status = result::CellStatus::kFailed;
  r.error = "cannot parse model: unexpected byte \xff\xfe at 12";
  r.model.name = "m\xc3";  // cut inside a two-byte character
  ASSERT_NO_THROW(result::write_run_result(r, path));
  const auto back = result::read_run_result(path);
  EXPECT_EQ(back.error, "cannot parse model: unexpected byte \xEF\xBF\xBD\xEF\xBF\xBD at 12");
  EXPECT_EQ(back.model.name, "m\xEF\xBF\xBD");
  std::filesystem::remove_all(dir);
}

TEST(JsonText, ReplacesInvalidUtf8AndKeepsValidText) {
  EXPECT_EQ(valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(valid_utf8("a\x80"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(json_text(nlohmann::json{{"m", "\xff"}}), "{\"m\":\"\xEF\xBF\xBD\"}");
}

TEST(ComparisonTable, ShowsRowsAndFailures) {
  auto ok = sample_result();
  result::RunResult failed;
  failed.backend.name = "openvino";
  failed.status = infermark::result::CellStatus::kCrashed;
  failed.error = "openvino: crashed: SIGSEGV while loading the model";
  const auto table = report::comparison_table({ok, failed});
  EXPECT_NE(table.find("| onnxruntime |"), std::string::npos) << table;
  EXPECT_NE(table.find("400.0"), std::string::npos) << table;
  EXPECT_NE(table.find("crashed"), std::string::npos) << table;
  EXPECT_NE(table.find("openvino: crashed: SIGSEGV while loading the model"), std::string::npos) << table;
  EXPECT_EQ(report::effective_setting(ok, "intra_op_threads"), "2");
  EXPECT_EQ(report::effective_setting(ok, "absent"), "");
}

// The notes under the table read the typed analysis: SLA verdict, ramp knee and pulse recovery.
TEST(ComparisonTable, ScenarioNotesReadTheAnalysis) {
  auto sla = sample_result();
  sla.analysis.sla->ttft = loadgen::SloCheck{200, 150.5};
  sla.analysis.sla->good_queries = 4;
  auto ramp = sample_result();
  ramp.analysis = {};
  ramp.analysis.ramp = loadgen::RampAnalysis{
      .steps = {{"concurrency 1", 10, 1, std::nullopt, std::nullopt}, {"concurrency 2", 10.1, 2, std::nullopt, std::nullopt}},
      .knee_step = 1,
      .knee_reason = "throughput flat"};
  auto pulse = sample_result();
  pulse.analysis = {.pulse = loadgen::PulseAnalysis{1.0, 40.0, 3, 1.5, 10, 15, 2.5}};
  const auto notes = report::scenario_notes({sla, ramp, pulse});
  EXPECT_NE(notes.find("SLO P99 <= 50 ms, TTFT P99 <= 200 ms: PASSED (P99 4.000 ms, TTFT P99 150.500 ms); goodput 400.00/s "
                       "(4 queries within every target)"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("knee at concurrency 2: throughput flat"), std::string::npos) << notes;
  EXPECT_NE(notes.find("pulse: baseline P99 1.000 ms, peak P99 40.000 ms, 3 errors/rejections in the burst, recovered 2.5 s"),
            std::string::npos)
      << notes;
}

// The typed generation section round-trips through JSON, and a file written before TTFT's origin
// and goodput were recorded still reads (those fields absent).
TEST(GenerationResult, RoundTripsAndReadsOlderFiles) {
  result::GenerationResult g;
  g.concurrency = 4;
  g.prompt_tokens = {64, 8, 640};
  g.output_tokens = {16, 0, 160};
  g.requests = 10;
  g.steps = 77;
  g.wall_s = 2.5;
  g.ttft_ms = stats::summarize(std::vector<double>{10, 20, 30});
  g.tpot_ms = stats::summarize(std::vector<double>{2, 3});
  g.requests_per_s = 4;
  g.ttft_from = "issue";
  g.goodput_rps = 3.5;
  g.shared_prefix =
      SharedPrefixResult{8, 512, loadgen::PrefixSplit{7, 3, stats::summarize(std::vector<double>{1, 2}), std::nullopt}};
  g.prompt_tokens_reused = 150;
  g.request_latencies = {{10'000'000, 50'000'000, 2'000'000}, {30'000'000, 31'000'000, std::nullopt}};
  const auto back = result::generation_from(to_json(g));
  EXPECT_EQ(back.prompt_tokens_reused, 150u);
  ASSERT_EQ(back.request_latencies.size(), 2u);
  EXPECT_EQ(back.request_latencies[0].ttft_ns, 10'000'000);
  EXPECT_EQ(back.request_latencies[0].e2e_ns, 50'000'000);
  EXPECT_EQ(back.request_latencies[0].tpot_ns, 2'000'000);
  EXPECT_FALSE(back.request_latencies[1].tpot_ns.has_value());
  EXPECT_TRUE(to_json(g)["request_latencies"]["tpot_ns"][1].is_null());
  auto damaged = to_json(g);  // columns of unequal length: none kept, never a misaligned request
  damaged["request_latencies"]["e2e_ns"].erase(1);
  EXPECT_TRUE(result::generation_from(damaged).request_latencies.empty());
  ASSERT_TRUE(back.shared_prefix.has_value());
  EXPECT_EQ(back.shared_prefix->groups, 8);
  EXPECT_EQ(back.shared_prefix->prefix_tokens, 512);
  EXPECT_EQ(back.shared_prefix->split.warm, 7u);
  EXPECT_EQ(back.shared_prefix->split.cold, 3u);
  EXPECT_DOUBLE_EQ(to_json(g)["shared_prefix"]["warm_share"].get<double>(), 0.7);
  ASSERT_TRUE(back.shared_prefix->split.ttft_warm_ms.has_value());
  EXPECT_FALSE(back.shared_prefix->split.ttft_cold_ms.has_value());
  EXPECT_EQ(back.concurrency, 4);
  EXPECT_EQ(back.prompt_tokens.total, 640);
  EXPECT_EQ(back.prompt_tokens.stddev, 8);
  EXPECT_EQ(back.requests, 10u);
  EXPECT_EQ(back.steps, 77);
  ASSERT_TRUE(back.ttft_ms && back.tpot_ms);
  EXPECT_FALSE(back.itl_ms.has_value());
  EXPECT_DOUBLE_EQ(back.ttft_ms->at(50).value, 20);
  EXPECT_EQ(back.ttft_from, "issue");
  EXPECT_EQ(back.goodput_rps, 3.5);
  auto older = to_json(g);
  older.erase("ttft_from");
  older.erase("goodput_rps");
  older.erase("shared_prefix");
  older.erase("prompt_tokens_reused");
  older.erase("request_latencies");
  const auto old = result::generation_from(older);
  EXPECT_TRUE(old.request_latencies.empty());
  EXPECT_FALSE(old.shared_prefix.has_value());
  EXPECT_FALSE(old.prompt_tokens_reused.has_value());
  EXPECT_TRUE(old.ttft_from.empty());
  EXPECT_FALSE(old.goodput_rps.has_value());
  EXPECT_EQ(old.requests, 10u);
}

}  // namespace infermark::result

namespace infermark::result {

TEST(RunResult, VectorCosineOfTokenEmbeddingsRoundTripsAndShowsInTheAgreementColumn) {
  auto r = sample_result();
  r.cross_check = result::CrossCheck{"onnxruntime", "ref.json", false, {}, {}};
  stats::OutputAgreement hidden{"last_hidden_state", true, "", 0.5, 0.03, 0.99, 0.2, std::nullopt, std::nullopt};
  hidden.vector_cosine_mean = 0.98934;
  hidden.vector_cosine_min = 0.9618;
  r.cross_check->outputs.push_back(hidden);
  const auto json = to_json(r);
  EXPECT_EQ(json["cross_check"]["outputs"][0]["vector_cosine_mean"], 0.98934);
  const auto back = result::run_result_from_json(json, "test");
  EXPECT_EQ(to_json(back), json);
  const auto table = report::comparison_table({back});
  EXPECT_NE(table.find("cos 0.98934 (min 0.9618)"), std::string::npos) << table;
  EXPECT_EQ(table.find("20.0%"), std::string::npos) << table;  // not the meaningless top-1 over hidden units

  auto logits = json;  // older result files carry no vector cosine
  logits["cross_check"]["outputs"][0].erase("vector_cosine_mean");
  logits["cross_check"]["outputs"][0].erase("vector_cosine_min");
  EXPECT_FALSE(result::run_result_from_json(logits, "test").cross_check->outputs[0].vector_cosine_mean.has_value());
}

}  // namespace infermark::result

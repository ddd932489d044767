// The infermark command line as a user runs it: real backends, real worker processes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/npy.hpp"
#include "e2e/cli_test_support.hpp"
#include "report/comparison_table.hpp"
#include "result/run_result.hpp"

namespace {

using namespace infermark::testing;

class Cli : public CliTest {
 protected:
  // These tests compare the two ONNX-family backends.
  void SetUp() override { prepare({"onnxruntime", "openvino"}, "infermark_e2e_"); }

  std::vector<infermark::result::RunResult> results() const {
    std::vector<infermark::result::RunResult> all;
    // results/<run folder>/<cell>.json; the cells' .outputs folders hold other files.
    for (const auto& run : fs::directory_iterator(dir_ / "results"))
      for (const auto& entry : fs::directory_iterator(run.path()))
        if (entry.path().extension() == ".json") all.push_back(infermark::result::read_run_result(entry.path().string()));
    std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.backend.name < b.backend.name; });
    return all;
  }

  // The two ONNX-family backends every build has; tests name them so a new backend changes nothing here.
  std::string quick(const std::string& backends = "onnxruntime,openvino") const {
    return " -b " + backends + " --warmup 2 --runs 15 --out " + (dir_ / "results").string();
  }
};

}  // namespace

TEST_F(Cli, BackendsListsBothFrameworksWithVersions) {
  const auto r = infermark("backends");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(onnxruntime\s+ONNX Runtime\s+\d+\.\d+\.\d+)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(openvino\s+OpenVINO\s+\d{4}\.\d+\.\d+)"))) << r.out;
}

TEST_F(Cli, EnvShowsTheMachine) {
  const auto r = infermark("env --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto env = nlohmann::json::parse(r.out);
  EXPECT_GE(env["logical_cores"].get<int>(), 1);
  EXPECT_TRUE(env["libraries"].contains("ONNX Runtime"));
  EXPECT_TRUE(env["libraries"].contains("OpenVINO"));
}

TEST_F(Cli, RunComparesBothBackendsAndWritesValidResults) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| onnxruntime |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| openvino "), std::string::npos) << r.out;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& result : all) {
    EXPECT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
    EXPECT_EQ(result.isolation, "worker process");
    ASSERT_TRUE(result.latency_ms.has_value());
    EXPECT_EQ(result.latency_ms->count, 15u);
    EXPECT_EQ(result.scenario.warmup_runs, 2);
    EXPECT_GT(result.memory.peak_rss_mb, 0.0);
    EXPECT_FALSE(result.environment.empty());
    ASSERT_TRUE(result.cross_check.has_value());
    EXPECT_EQ(result.cross_check->reference_backend, "onnxruntime");
    const auto& logits = result.cross_check->outputs.at(0);
    EXPECT_TRUE(logits.comparable);
    EXPECT_LT(logits.max_abs_error, 1e-3);
    EXPECT_EQ(logits.top1_agreement, 1.0);
    EXPECT_TRUE(fs::exists(fs::path(result.outputs_dir) / "logits.npy"));
  }
  EXPECT_NE(r.out.find("(reference)"), std::string::npos) << r.out;
}

TEST_F(Cli, UserInputFilesAreFedAsGiven) {
  infermark::Tensor batch_of_two{"input", infermark::DType::kFloat32, {2, 3, 32, 32}, {}};
  batch_of_two.data.resize(batch_of_two.element_count() * 4);
  const auto file = dir_ / "two.npy";
  infermark::write_npy(batch_of_two, file);
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --input input=" + file.string() + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& result : results()) {
    EXPECT_EQ(result.scenario.inputs.at(0).shape, (std::vector<std::int64_t>{2, 3, 32, 32}));
    EXPECT_EQ(result.scenario.batch, 2);
  }
  const auto missing =
      infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --input input=" + (dir_ / "nope.npy").string() + quick());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.npy: no such file"), std::string::npos) << missing.err;
}

// A file of 7 rows runs batch 7 per query: the header and the table say so, as the result does.
TEST_F(Cli, TheBatchThatRanIsTheBatchPrinted) {
  infermark::Tensor photos{"input", infermark::DType::kFloat32, {7, 3, 32, 32}, {}};
  photos.data.resize(photos.element_count() * 4);
  const auto file = dir_ / "photos.npy";
  infermark::write_npy(photos, file);
  const auto r =
      infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --input input=" + file.string() + quick("onnxruntime"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(", batch 7 (rows of --input input=" + file.string() + "),"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\| +threads +\| +batch +\|)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\| onnxruntime +\| [^|]+\| +\d+ +\| +7 +\|)"))) << r.out;
  ASSERT_EQ(results().size(), 1u);
  EXPECT_EQ(results().front().scenario.batch, 7);
}

TEST_F(Cli, AThreadListGivesOneCellPerBackendAndCount) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --threads 1,2" + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 4u);
  int references = 0;
  for (const auto& result : all) {
    EXPECT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
    EXPECT_EQ(result.requested.intra_op_threads, infermark::report::effective_setting(result, "intra_op_threads") == "1" ? 1 : 2);
    ASSERT_TRUE(result.cross_check.has_value());
    references += result.cross_check->is_reference;
  }
  EXPECT_EQ(references, 1);  // one reference cell; every other cell is compared with it
}

// Cells that differ only in concurrency (a --concurrency list; an LLM's 1,4,16) each keep their own
// result file: none overwrites another.
TEST_F(Cli, AConcurrencyListKeepsOneResultPerLevel) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --scenario concurrency --concurrency 1,2" +
                           quick("onnxruntime"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto all = results();
  ASSERT_EQ(all.size(), 2u) << r.out;
  std::set<int> levels;
  for (const auto& result : all) {
    EXPECT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
    levels.insert(result.scenario.parameters.lanes.value_or(0));
  }
  EXPECT_EQ(levels, (std::set<int>{1, 2}));
  EXPECT_NE(r.out.find("tiny_cnn.onnxruntime.t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".c2.json"), std::string::npos) << r.out;
}

TEST_F(Cli, ATruncatedModelFailsWithTheFrameworksReason) {
  const auto truncated = dir_ / "truncated.onnx";
  fs::copy_file(kModels / "tiny_cnn.onnx", truncated);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  const auto r = infermark("run " + truncated.string() + quick());
  EXPECT_EQ(r.exit_code, 1);
  for (const auto& result : results()) {
    EXPECT_EQ(result.status, infermark::result::CellStatus::kFailed);
    EXPECT_NE(result.error.find("truncated.onnx"), std::string::npos) << result.error;
    EXPECT_NE(result.error.find("while loading the model"), std::string::npos) << result.error;
  }
}

TEST_F(Cli, InProcessModeGivesTheSameShapeOfResult) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --in-process" + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& result : all) {
    EXPECT_EQ(result.isolation, "in-process");
    EXPECT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
  }
}

TEST_F(Cli, MissingModelIsOneClearLine) {
  const auto r = infermark("run " + (dir_ / "absent.onnx").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("absent.onnx: no such file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

TEST_F(Cli, FileThatIsNotAModelFailsEachBackendWithItsReason) {
  const auto fake = dir_ / "notes.onnx";
  std::ofstream(fake) << "not a model";
  const auto r = infermark("run " + fake.string() + quick());
  EXPECT_EQ(r.exit_code, 1);
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& result : all) {
    EXPECT_EQ(result.status, infermark::result::CellStatus::kFailed);
    EXPECT_NE(result.error.find("notes.onnx"), std::string::npos) << result.error;
    EXPECT_NE(result.error.find(result.backend.name), std::string::npos) << result.error;
  }
}

TEST_F(Cli, UnknownBackendIsReportedAndTheOthersStillRun) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " -b tensorflowz" + quick());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown backend 'tensorflowz'"), std::string::npos) << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& result : all) EXPECT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
}

TEST_F(Cli, ImpossibleFlagValuesAreRejectedBeforeAnythingRuns) {
  const auto model = (kModels / "tiny_cnn.onnx").string();
  for (const std::string flags :
       {"--runs 0", "--batch -1", "--threads -2", "--warmup x", "--precision fp8", "--shape input=1x3xx32", "--timeout 0"}) {
    const auto r = infermark("run " + model + " " + flags + quick());
    EXPECT_NE(r.exit_code, 0) << flags;
    const auto flag = flags.substr(0, flags.find(' '));
    EXPECT_NE(r.err.find(flag), std::string::npos) << flags << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "results")) << flags;
  }
}

TEST_F(Cli, DynamicShapesNeedTheShapeFlag) {
  const auto model = (kModels / "tiny_cnn_dynamic_hw.onnx").string();
  const auto without = infermark("run " + model + quick());
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.out.find("--shape input="), std::string::npos) << without.out;
  fs::remove_all(dir_ / "results");
  const auto with = infermark("run " + model + " --shape input=1x3x48x48" + quick());
  EXPECT_EQ(with.exit_code, 0) << with.out << with.err;
  for (const auto& result : results()) EXPECT_EQ(result.scenario.inputs.at(0).shape, (std::vector<std::int64_t>{1, 3, 48, 48}));
}

TEST_F(Cli, ACrashingFrameworkDoesNotTakeDownTheComparison) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + quick(),
                           std::string("INFERMARK_BACKEND_PATH=") + INFERMARK_CRASH_PLUGIN_DIR);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].backend.name, "onnxruntime");
  EXPECT_EQ(all[0].status, infermark::result::CellStatus::kCrashed);
  EXPECT_NE(all[0].error.find("SIGSEGV while loading the model"), std::string::npos) << all[0].error;
  EXPECT_EQ(all[1].backend.name, "openvino");
  EXPECT_EQ(all[1].status, infermark::result::CellStatus::kOk) << all[1].error;
}

TEST_F(Cli, AHungFrameworkIsStoppedAtTheTimeoutAndTheOthersStillRun) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --timeout 3" + quick(),
                           std::string("INFERMARK_BACKEND_PATH=") + INFERMARK_HANG_PLUGIN_DIR);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].backend.name, "onnxruntime");
  EXPECT_EQ(all[0].status, infermark::result::CellStatus::kOk) << all[0].error;
  EXPECT_EQ(all[1].backend.name, "openvino");
  EXPECT_EQ(all[1].status, infermark::result::CellStatus::kTimeout);
  EXPECT_NE(all[1].error.find("timed out after 3 s while loading the model"), std::string::npos) << all[1].error;
}

TEST_F(Cli, AWorkerOverTheMemoryLimitIsStoppedAndReportedAsSuch) {
  // 20 MiB is below what a worker holds once a framework is loaded; 4 GiB is far above it.
  const auto model = (kModels / "tiny_cnn.onnx").string();
  const auto limited = infermark("run " + model + " --memory-limit 20M" + quick("onnxruntime"));
  EXPECT_EQ(limited.exit_code, 1) << limited.out << limited.err;
  EXPECT_NE(limited.out.find("memory_limit"), std::string::npos) << limited.out;  // the table is printed
  auto all = results();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].status, infermark::result::CellStatus::kMemoryLimit);
  EXPECT_NE(all[0].error.find("over the limit of 20 MiB"), std::string::npos) << all[0].error;
  EXPECT_EQ(all[0].memory.limit_mb, 20.0);

  fs::remove_all(dir_ / "results");
  const auto roomy = infermark("run " + model + " --memory-limit 4G" + quick("onnxruntime"));
  EXPECT_EQ(roomy.exit_code, 0) << roomy.out << roomy.err;
  all = results();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].status, infermark::result::CellStatus::kOk) << all[0].error;
  EXPECT_EQ(all[0].memory.limit_mb, 4096.0);

  EXPECT_EQ(infermark("run " + model + " --memory-limit 12Q").exit_code, 2);
  EXPECT_EQ(infermark("run " + model + " --memory-limit 1G --in-process").exit_code, 2);
}

TEST_F(Cli, AFullDiskNamesTheFileAndTheCauseAndStillPrintsTheTable) {
  // An 8 KiB file size limit (RLIMIT_FSIZE, as a nearly full disk): no measured result fits.
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + quick(), "ulimit -f 8;");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("| onnxruntime"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| openvino"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result file not written: File too large"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

// Shapes drawn per query: every input set's outputs are compared with the reference backend's
// same set, folded per shape, and the table names the shape that agrees worst.
TEST_F(Cli, VaryingShapesAreCrossCheckedOnEveryInputSet) {
  const auto r = infermark("run " + (kModels / "tiny_cnn_dynamic_hw.onnx").string() +
                           " --shape-range input=1x3x24-40/8x24-40/8 --shape-sets 6" + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 2u);
  const auto& candidate = all[0].backend.name == "openvino" ? all[0] : all[1];
  ASSERT_TRUE(candidate.cross_check.has_value());
  EXPECT_EQ(candidate.cross_check->reference_backend, "onnxruntime");
  const auto& shapes = candidate.cross_check->by_shape;
  ASSERT_TRUE(candidate.scenario.parameters.varying_shapes && candidate.scenario.parameters.varying_shapes->distinct_shapes);
  ASSERT_EQ(shapes.size(), *candidate.scenario.parameters.varying_shapes->distinct_shapes);
  int sets = 0;
  for (const auto& shape : shapes) {
    sets += shape.sets;
    EXPECT_TRUE(shape.comparable) << shape.shape;
    EXPECT_LT(shape.max_abs_error, 1e-2) << shape.shape;  // the same network on the same inputs
    EXPECT_GT(shape.min_cosine_similarity, 0.99) << shape.shape;
  }
  EXPECT_EQ(sets, 6);
  EXPECT_NE(r.out.find("openvino: outputs checked against onnxruntime on " + std::to_string(shapes.size()) +
                       " shapes; worst input=1x3x"),
            std::string::npos)
      << r.out;
}

TEST_F(Cli, ServerScenarioWithAnSlaReportsTheVerdictAndTheTimeSeries) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() +
                           " --scenario server --qps 200 --duration 1 --p99-ms 50 --concurrency 2" + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SLO P99 <= 50 ms"), std::string::npos) << r.out;
  for (const auto& result : results()) {
    EXPECT_EQ(result.scenario.name, infermark::loadgen::Scenario::kServer);
    ASSERT_TRUE(result.analysis.sla.has_value()) << infermark::loadgen::to_json(result.analysis).dump();
    EXPECT_EQ(result.analysis.sla->p99_ms_target, 50.0);
    ASSERT_EQ(result.phases.size(), 1u);
    EXPECT_GT(result.phases[0].issued, 100u);
    EXPECT_TRUE(result.phases[0].issue_lateness_us);
    ASSERT_TRUE(result.time_series);
    EXPECT_FALSE(result.time_series->empty());
    EXPECT_EQ(result.scenario.parameters.lanes, 2);
    ASSERT_TRUE(result.resources.has_value());
    EXPECT_TRUE(result.resources->summary.energy.available || !result.resources->summary.energy.source.empty());
    EXPECT_GT(result.resources->inferences, 100);
    EXPECT_FALSE(result.resources->summary.samples.empty());  // read back from the result file
    EXPECT_EQ(result.throughput.inferences_per_s > 0, true);
  }
}

TEST_F(Cli, RampReportsEveryStepAndItsKnee) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() +
                           " --scenario ramp --ramp-step 2 --ramp-steps 3 --step-duration 0.3" + quick());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& result : results()) {
    ASSERT_EQ(result.phases.size(), 3u);
    EXPECT_EQ(result.phases[2].concurrency, 4);  // 1, 2, 4
    ASSERT_TRUE(result.analysis.ramp.has_value()) << infermark::loadgen::to_json(result.analysis).dump();
    EXPECT_FALSE(result.analysis.ramp->knee_reason.empty());
    EXPECT_EQ(result.analysis.ramp->steps.size(), 3u);
  }
}

TEST_F(Cli, PulseAndSoakRunWithShortPhases) {
  const auto model = (kModels / "tiny_cnn.onnx").string();
  auto r = infermark("run " + model + " --scenario pulse --pulse-times 1,1,1 --capacity-probe 0.3" + quick("onnxruntime"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& result : results())
    EXPECT_TRUE(result.analysis.pulse.has_value()) << infermark::loadgen::to_json(result.analysis).dump();
  fs::remove_all(dir_ / "results");
  r = infermark("run " + model + " --scenario soak --soak-duration 2 --soak-interval 0.5 --capacity-probe 0.3" +
                quick("onnxruntime"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& result : results()) {
    ASSERT_TRUE(result.analysis.soak.has_value()) << infermark::loadgen::to_json(result.analysis).dump();
    EXPECT_GT(result.analysis.soak->latency.points, 0u);
    EXPECT_GT(result.scenario.parameters.soak_qps.value_or(0), 0.0);
  }
}

TEST_F(Cli, ImpossibleScenarioSettingsFailBeforeAnythingRuns) {
  const auto model = (kModels / "tiny_cnn.onnx").string();
  for (const std::string flags :
       {"--scenario server", "--scenario server --qps -5", "--scenario server --qps 10 --duration 0",
        "--scenario concurrency --concurrency 0", "--p99-ms -1", "--scenario nonsense", "--scenario server --find-max-qps"}) {
    const auto r = infermark("run " + model + " " + flags + quick());
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_FALSE(r.err.empty()) << flags;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << flags << ": one line expected, got " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "results")) << flags;
  }
}

// One SIGINT, as a terminal's Ctrl-C sends (timeout --foreground signals only infermark itself;
// a second signal would end infermark at once, by design).
TEST_F(Cli, CtrlCKeepsWhatWasMeasuredMarkedInterrupted) {
  for (const std::string signal : {"INT", "TERM"}) {  // Ctrl-C, and a scheduler or `kill` stopping the run
    fs::remove_all(dir_ / "results");
    const auto r = infermark(
        "run " + (kModels / "tiny_cnn.onnx").string() + " --scenario server --qps 200 --duration 60" + quick("onnxruntime"),
        "timeout --foreground --preserve-status -s " + signal + " 3");
    EXPECT_EQ(r.exit_code, 130) << signal << r.out << r.err;
    EXPECT_NE(r.out.find("| onnxruntime"), std::string::npos) << r.out;  // the table is still printed
    const auto all = results();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].status, infermark::result::CellStatus::kInterrupted) << all[0].error;
    ASSERT_TRUE(all[0].latency_ms.has_value());
    EXPECT_GT(all[0].latency_ms->count, 10u);
  }
}

TEST_F(Cli, BackendsListTheOptionsEachAccepts) {
  const auto r = infermark("backends");
  EXPECT_NE(r.out.find("onnxruntime  graph_optimization=disable|basic|extended|all (default all)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("openvino     performance_hint=latency|throughput"), std::string::npos) << r.out;
}

TEST_F(Cli, OnnxRuntimeProfileIsSavedBesideTheResult) {
  const auto r = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " --opt profile=on" + quick("onnxruntime"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto all = results();
  ASSERT_EQ(all.size(), 1u);
  bool found = false;
  for (const auto& entry : fs::directory_iterator(all[0].outputs_dir))
    found = found || entry.path().filename().string().rfind("onnxruntime_profile_", 0) == 0;
  EXPECT_TRUE(found);
  EXPECT_NE(infermark::report::effective_setting(all[0], "profile").find("onnxruntime_profile"), std::string::npos);
}

TEST_F(Cli, ReportPrintsGuideTablesPerModelAndCsv) {
  const auto tiny = (kModels / "tiny_cnn.onnx").string();
  ASSERT_EQ(infermark("run " + tiny + " --threads 1,2" + quick()).exit_code, 0);
  ASSERT_EQ(infermark("run " + (kModels / "tiny_cnn_int8.onnx").string() + quick()).exit_code, 0);
  const auto r = infermark("report " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Results cover 2 models"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("## tiny_cnn\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("## tiny_cnn_int8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### Threads × throughput"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| onnxruntime t1 "), std::string::npos) << r.out;
  const auto csv_file = dir_ / "cells.csv";
  ASSERT_EQ(infermark("report " + (dir_ / "results").string() + " --csv " + csv_file.string()).exit_code, 0);
  const auto csv = slurp(csv_file);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6);  // header + 4 tiny_cnn cells + 2 int8 cells
}

TEST_F(Cli, ReportRefusesBadInputClearly) {
  auto r = infermark("report " + (dir_ / "nowhere").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nowhere: no such file or folder"), std::string::npos) << r.err;
  fs::create_directories(dir_ / "empty");
  r = infermark("report " + (dir_ / "empty").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no infermark result files in this folder"), std::string::npos) << r.err;
  std::ofstream(dir_ / "other.json") << R"({"hello": 1})";
  r = infermark("report " + (dir_ / "other.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("other.json: not an infermark run result"), std::string::npos) << r.err;
}

TEST_F(Cli, ConcurrentLanesShareOneSessionOrOpenSeparateOnes) {
  const auto model = (kModels / "tiny_cnn.onnx").string();
  ASSERT_EQ(infermark("run " + model + " --scenario concurrency --concurrency 3" + quick("onnxruntime")).exit_code, 0);
  auto all = results();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].scenario.parameters.session_sharing, "one session, 3 concurrent request slots");
  fs::remove_all(dir_ / "results");
  ASSERT_EQ(
      infermark("run " + model + " --scenario concurrency --concurrency 3 --sessions separate" + quick("onnxruntime")).exit_code,
      0);
  all = results();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].scenario.parameters.session_sharing, "3 separate sessions, one per lane");
  EXPECT_EQ(all[0].scenario.parameters.sessions, infermark::result::SessionSharing::kSeparate);
}

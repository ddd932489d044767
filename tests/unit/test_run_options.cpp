// `run` flags -> cell requests: the flags parsed by the CLI's own definitions, the cells they
// expand to (backend x threads x concurrency), their result file stems, and the errors that name
// the flag before anything runs.
#include "harness/run_options.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <tuple>

#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"

namespace infermark {
namespace {

// The options `infermark run MODEL ARGS...` would measure, parsed by the real flag definitions.
harness::RunOptions parse_run_flags(const std::string& model, std::vector<std::string> args) {
  harness::RunOptions options;
  options.model = model;
  CLI::App app;
  cli::add_measurement_flags(app, options);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed argument vector
  app.parse(args);
  return options;
}

// The message of the infermark::Error that building the cells throws, or "" when none is thrown.
std::string cell_error(const harness::RunOptions& options, const std::string& backend = "onnxruntime") {
  try {
    harness::model_cells(options, {backend});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The message of the CLI11 error parsing the flags throws, or "" when they parse.
std::string flag_error(std::vector<std::string> args) {
  try {
    parse_run_flags("models/tiny_cnn.onnx", std::move(args));
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(RunOptions, ThreadsAndConcurrencyListsGiveOneCellEachPerBackend) {
  const auto options = parse_run_flags("models/tiny_cnn.onnx", {"--threads", "1,2", "--concurrency", "1,4", "--batch", "8",
                                                                "--scenario", "concurrency", "--seed", "7"});
  const auto cells = harness::model_cells(options, {"onnxruntime", "openvino"});
  ASSERT_EQ(cells.size(), 8u);
  // Backend, then threads, then concurrency.
  const std::vector<std::tuple<std::string, int, int>> expected{
      {"onnxruntime", 1, 1}, {"onnxruntime", 1, 4}, {"onnxruntime", 2, 1}, {"onnxruntime", 2, 4},
      {"openvino", 1, 1},    {"openvino", 1, 4},    {"openvino", 2, 1},    {"openvino", 2, 4}};
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& [backend, threads, concurrency] = expected[i];
    EXPECT_EQ(cells[i].backend, backend) << i;
    EXPECT_EQ(cells[i].options.intra_op_threads, threads) << i;
    EXPECT_EQ(cells[i].scenario.concurrency, concurrency) << i;
    EXPECT_EQ(cells[i].model, "models/tiny_cnn.onnx");
    EXPECT_EQ(cells[i].scenario.name, loadgen::Scenario::kConcurrency);
    EXPECT_EQ(cells[i].inputs.batch, 8);
    EXPECT_EQ(cells[i].inputs.seed, 7u);
    EXPECT_EQ(cells[i].scenario.seed, 7u);
  }
  EXPECT_EQ(harness::default_cell_names(cells),
            (std::vector<std::string>{"tiny_cnn.onnxruntime.t1.c1", "tiny_cnn.onnxruntime.t1.c4", "tiny_cnn.onnxruntime.t2.c1",
                                      "tiny_cnn.onnxruntime.t2.c4", "tiny_cnn.openvino.t1.c1", "tiny_cnn.openvino.t1.c4",
                                      "tiny_cnn.openvino.t2.c1", "tiny_cnn.openvino.t2.c4"}));
}

TEST(RunOptions, RepeatedListValuesCountOnceInTheOrderGiven) {
  const auto options = parse_run_flags("m.onnx", {"--threads", "4,1,4", "--concurrency", "8,2,8"});
  EXPECT_EQ(harness::thread_counts(options), (std::vector<int>{4, 1}));
  EXPECT_EQ(harness::concurrency_levels(options), (std::vector<int>{8, 2}));
  EXPECT_EQ(harness::model_cells(options, {"onnxruntime"}).size(), 4u);
}

TEST(RunOptions, DefaultsAreThePhysicalCoresAndTheScenariosOwnConcurrency) {
  const auto options = parse_run_flags("dir/m.onnx", {});
  EXPECT_EQ(harness::thread_counts(options), std::vector<int>{harness::default_thread_count()});
  EXPECT_GE(harness::default_thread_count(), 1);
  EXPECT_EQ(harness::concurrency_levels(options), std::vector<int>{0});
  const auto cells = harness::model_cells(options, {"onnxruntime"});
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].scenario.name, loadgen::Scenario::kSingleStream);
  EXPECT_EQ(cells[0].scenario.concurrency, 0);
  EXPECT_EQ(cells[0].inputs.batch, 1);
  EXPECT_EQ(cells[0].options.precision, "fp32");
  EXPECT_EQ(cells[0].sessions, result::SessionSharing::kShared);
  EXPECT_EQ(harness::default_cell_names(cells),
            std::vector<std::string>{"m.onnxruntime.t" + std::to_string(harness::default_thread_count())});
}

TEST(RunOptions, FileStemsAddConcurrencyOnlyWhereItAloneTellsCellsApart) {
  const auto options = parse_run_flags("m.onnx", {"--threads", "0,3"});
  const auto cells = harness::model_cells(options, {"onnxruntime"});
  // Threads 0 is each framework's own default; no concurrency list, so no .c suffix.
  EXPECT_EQ(harness::default_cell_names(cells), (std::vector<std::string>{"m.onnxruntime.tdefault", "m.onnxruntime.t3"}));
  // Cells alike in everything get their position as well, so none overwrites another's file.
  auto twins = harness::model_cells(parse_run_flags("m.onnx", {"--threads", "2", "--concurrency", "4"}), {"onnxruntime"});
  twins.push_back(twins.front());
  EXPECT_EQ(harness::default_cell_names(twins), (std::vector<std::string>{"m.onnxruntime.t2.c4.1", "m.onnxruntime.t2.c4.2"}));
}

TEST(RunOptions, FlagsReachTheirPlaceInTheCell) {
  const auto options = parse_run_flags(
      "m.onnx", {"--opt",         "a=b",      "--opt",           "c=d=e",     "--sessions",         "separate",
                 "--arrivals",    "constant", "--prompt-tokens", "512:64",    "--output-tokens",    "16",
                 "--pulse-times", "5,6,7",    "--shape",         "x=1x3x8x8", "--shape-range",      "y=1x3x24-40/8x32",
                 "--shape-range", "z=2x5",    "--shape-sets",    "4",         "--inter-op-threads", "2",
                 "--precision",   "bf16",     "--int-high",      "9"});
  const auto cell = harness::to_cell(options, "onnxruntime", 3);
  EXPECT_EQ(cell.options.extras, (std::map<std::string, std::string>{{"a", "b"}, {"c", "d=e"}}));
  EXPECT_EQ(cell.sessions, result::SessionSharing::kSeparate);
  EXPECT_EQ(cell.scenario.arrivals, loadgen::Arrivals::kConstant);
  EXPECT_EQ(cell.scenario.prompt_tokens, 512);
  EXPECT_EQ(cell.scenario.prompt_tokens_stddev, 64);
  EXPECT_EQ(cell.scenario.output_tokens, 16);
  EXPECT_EQ(cell.scenario.output_tokens_stddev, 0);
  EXPECT_EQ(cell.scenario.pulse_baseline_s, 5);
  EXPECT_EQ(cell.scenario.pulse_burst_s, 6);
  EXPECT_EQ(cell.scenario.pulse_recovery_s, 7);
  EXPECT_EQ(cell.inputs.shape_overrides.at("x"), (std::vector<std::int64_t>{1, 3, 8, 8}));
  // A range that does not vary is a fixed shape; one that does is drawn per query.
  EXPECT_EQ(cell.inputs.shape_overrides.at("z"), (std::vector<std::int64_t>{2, 5}));
  ASSERT_EQ(cell.inputs.varying.ranges.count("y"), 1u);
  EXPECT_EQ(cell.inputs.varying.ranges.count("z"), 0u);
  EXPECT_EQ(cell.inputs.varying.sets, 4);
  EXPECT_EQ(cell.options.intra_op_threads, 3);
  EXPECT_EQ(cell.options.inter_op_threads, 2);
  EXPECT_EQ(cell.options.precision, "bf16");
  EXPECT_EQ(cell.inputs.int_high, 9);
}

TEST(RunOptions, MalformedValuesNameTheFlag) {
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--opt", "fast"})), "--opt fast: expected NAME=VALUE");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--shape", "1x3"})), "--shape 1x3: expected NAME=VALUE");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--shape", "x=1x3", "--shape-range", "x=1x3x8-16"})),
            "--shape-range x=1x3x8-16: input 'x' already has a shape; give one --shape or --shape-range per input");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--prompt-tokens", "many"})),
            "--prompt-tokens many: expected MEAN or MEAN:STDDEV tokens");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--output-tokens", "0.5"})), "--output-tokens 0.5: must be at least 1 token");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--pulse-times", "10,10"})),
            "--pulse-times 10,10: expected BASELINE,BURST,RECOVERY seconds");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--input", "x=/nonexistent/infermark/x.npy"})),
            "--input x=/nonexistent/infermark/x.npy: no such file");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--scenario", "server"})),
            "--scenario server needs --qps above 0 (or --find-max-qps)");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--scenario", "concurrency"})),
            "--scenario concurrency needs --concurrency N (N >= 1)");
  EXPECT_EQ(cell_error(parse_run_flags("m.onnx", {"--threads", "2"})), "");
}

TEST(RunOptions, FlagValidatorsSayWhatIsWrong) {
  EXPECT_NE(flag_error({"--batch", "0"}).find("--batch: 0 must be above 0"), std::string::npos) << flag_error({"--batch", "0"});
  EXPECT_NE(flag_error({"--threads", "2,-1"}).find("-1 is negative"), std::string::npos) << flag_error({"--threads", "2,-1"});
  EXPECT_NE(flag_error({"--qps", "fast"}).find("'fast' is not a number"), std::string::npos) << flag_error({"--qps", "fast"});
  EXPECT_NE(flag_error({"--concurrency", "0"}).find("0 must be above 0"), std::string::npos);
  EXPECT_NE(flag_error({"--scenario", "burst"}).find("--scenario"), std::string::npos);
  EXPECT_NE(flag_error({"--precision", "int3"}).find("--precision"), std::string::npos);
  EXPECT_EQ(flag_error({"--batch", "4", "--threads", "0,1"}), "");
}

TEST(RunOptions, LanguageModelsRunEveryScenario) {
  auto cell = harness::to_cell(parse_run_flags("m.gguf", {}), "llamacpp", 2);
  EXPECT_EQ(cell.scenario.name, loadgen::Scenario::kSingleStream);
  cell = harness::to_cell(parse_run_flags("m.gguf", {"--concurrency", "4"}), "llamacpp", 2);
  EXPECT_EQ(cell.scenario.name, loadgen::Scenario::kConcurrency);  // C sequences batched together
  EXPECT_EQ(cell.scenario.concurrency, 4);
  cell = harness::to_cell(
      parse_run_flags("m.gguf", {"--scenario", "server", "--qps", "5", "--ttft-ms", "200", "--tpot-ms", "20"}), "llamacpp", 2);
  EXPECT_EQ(cell.scenario.name, loadgen::Scenario::kServer);
  EXPECT_EQ(cell.scenario.ttft_ms, 200);
  EXPECT_EQ(cell.scenario.tpot_ms, 20);
  EXPECT_EQ(cell_error(parse_run_flags("m.gguf", {"--scenario", "server", "--find-max-qps"}), "llamacpp"),
            "--find-max-qps needs an SLO: --p99-ms, --ttft-ms or --tpot-ms");
  // Interactive: MLPerf's limits where none is given, a given one kept.
  cell = harness::to_cell(parse_run_flags("m.gguf", {"--scenario", "interactive", "--find-max-qps"}), "llamacpp", 2);
  EXPECT_EQ(cell.scenario.name, loadgen::Scenario::kInteractive);
  EXPECT_EQ(std::tie(cell.scenario.ttft_ms, cell.scenario.tpot_ms), std::make_tuple(450.0, 40.0));
  cell =
      harness::to_cell(parse_run_flags("m.gguf", {"--scenario", "interactive", "--qps", "2", "--ttft-ms", "900"}), "llamacpp", 2);
  EXPECT_EQ(std::tie(cell.scenario.ttft_ms, cell.scenario.tpot_ms), std::make_tuple(900.0, 40.0));
  EXPECT_EQ(cell_error(parse_run_flags("m.gguf", {"--scenario", "interactive"}), "llamacpp"),
            "--scenario interactive needs --qps above 0 (or --find-max-qps)");
  // Conversations: turns and think time reach the scenario; think time is seconds, at least 0.
  cell = harness::to_cell(parse_run_flags("m.gguf", {"--turns", "4", "--think-time", "1.5:0.5", "--concurrency", "2"}),
                          "llamacpp", 2);
  EXPECT_EQ(cell.scenario.conversation.turns, 4);
  EXPECT_EQ(std::tie(cell.scenario.conversation.think_s, cell.scenario.conversation.think_stddev_s), std::make_tuple(1.5, 0.5));
  EXPECT_EQ(cell_error(parse_run_flags("m.gguf", {"--turns", "4", "--think-time", "-1"}), "llamacpp"),
            "--think-time -1: expected MEAN or MEAN:STDDEV seconds");
  // Other models keep the scenario they asked for.
  EXPECT_EQ(harness::to_cell(parse_run_flags("m.onnx", {"--concurrency", "4"}), "onnxruntime", 2).scenario.name,
            loadgen::Scenario::kSingleStream);
}

TEST(RunOptions, BackendSelection) {
  const std::vector<std::string> available{"onnxruntime", "libtorch", "openvino"};
  // Nothing requested: every available backend that reads the format, in the registry's order.
  EXPECT_EQ(harness::select_backends({}, "m.onnx", available).chosen, (std::vector<std::string>{"onnxruntime", "openvino"}));
  EXPECT_EQ(harness::select_backends({}, "m.pt", available).chosen, std::vector<std::string>{"libtorch"});
  try {
    harness::select_backends({}, "m.gguf", available);
    FAIL() << "no available backend reads .gguf";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "m.gguf: no built backend reads .gguf models (see `infermark backends`)");
  }
  // Requested: those that cannot run are set aside with the reason, duplicates count once.
  const auto selection =
      harness::select_backends({"openvino", "tensorflowz", "opencv", "openvino", "libtorch"}, "m.onnx", available);
  EXPECT_EQ(selection.chosen, std::vector<std::string>{"openvino"});
  ASSERT_EQ(selection.rejected.size(), 3u);
  EXPECT_EQ(selection.rejected[0].first, "tensorflowz");
  EXPECT_NE(selection.rejected[0].second.find("unknown backend 'tensorflowz'"), std::string::npos);
  EXPECT_EQ(selection.rejected[1],
            (std::pair<std::string, std::string>{
                "opencv", "backend 'opencv' is not built into this infermark (see `infermark backends`)"}));
  EXPECT_EQ(selection.rejected[2],
            (std::pair<std::string, std::string>{"libtorch", "backend 'libtorch' does not read .onnx models (m.onnx)"}));
  EXPECT_TRUE(harness::select_backends({"libtorch"}, "m.onnx", available).chosen.empty());
}

TEST(RunOptions, Announcement) {
  EXPECT_EQ(harness::thread_list_text({0, 2, 4}), "framework-default,2,4");
  loadgen::ScenarioSpec server;
  server.name = loadgen::Scenario::kServer;
  server.qps = 10;
  EXPECT_EQ(harness::default_cell_timeout_s(server), loadgen::planned_duration_s(server) + 600);
}

}  // namespace
}  // namespace infermark

// Every command's options, parsed by the command's own flag definitions (cli/parse_command.hpp):
// what each flag fills, the defaults where it is not given, and the flag errors that stop a
// command before it runs. `run`'s measurement flags and the cells they expand to are in
// test_run_options.cpp.
#include "cli/parse_command.hpp"

#include <gtest/gtest.h>

#include "cli/backends_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/env_command.hpp"
#include "cli/load_command.hpp"
#include "cli/pipeline_command.hpp"
#include "cli/recommend_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/sweep_command.hpp"
#include "cli/worker_command.hpp"
#include "cli/zoo_command.hpp"
#include "core/error.hpp"

namespace infermark::cli {
namespace {

// The error `args` give `define_flags` (CLI11's, or infermark's from a flag's own check), or "" when
// they parse.
template <class Options>
std::string parse_error(void (*define_flags)(CLI::App&, Options&), const std::vector<std::string>& args) {
  try {
    parse_command(define_flags, args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunCommand, ModelsBackendsAndCellSettings) {
  const auto o = parse_command(define_run_flags, {"a.onnx", "b.onnx", "-b", "onnxruntime,openvino", "--out", "out", "--timeout",
                                                  "30", "--reference", "openvino", "--threads", "2"});
  EXPECT_EQ(o.models, (std::vector<std::string>{"a.onnx", "b.onnx"}));
  EXPECT_EQ(o.backends, (std::vector<std::string>{"onnxruntime", "openvino"}));
  EXPECT_EQ(o.out, "out");
  EXPECT_DOUBLE_EQ(o.timeout_s, 30);
  EXPECT_EQ(o.reference, "openvino");
  EXPECT_EQ(o.measurement.threads, std::vector<int>{2});
  EXPECT_FALSE(o.in_process);
}

TEST(RunCommand, DefaultsWhenOnlyAModelIsGiven) {
  const auto o = parse_command(define_run_flags, {"a.onnx"});
  EXPECT_TRUE(o.backends.empty());  // every capable backend
  EXPECT_EQ(o.out, "results");
  EXPECT_DOUBLE_EQ(o.timeout_s, 0);
  EXPECT_DOUBLE_EQ(o.memory_limit_mb, 0);
  EXPECT_EQ(o.reference, "onnxruntime");
}

TEST(RunCommand, FlagErrorsNameTheFlag) {
  EXPECT_NE(parse_error(define_run_flags, {}).find("models"), std::string::npos);
  EXPECT_NE(parse_error(define_run_flags, {"a.onnx", "--timeout", "0"}).find("--timeout"), std::string::npos);
  // A memory limit is enforced on the worker process, which --in-process has none of.
  EXPECT_NE(parse_error(define_run_flags, {"a.onnx", "--in-process", "--memory-limit", "1G"}).find("excludes"),
            std::string::npos);
}

TEST(LoadCommand, ProtocolEndpointAndStreamingFillTheRequest) {
  const auto o =
      parse_command(define_load_flags, {"http://127.0.0.1:8080", "--protocol", "openai", "--model", "m", "--endpoint",
                                        "completions", "--no-stream", "--no-ignore-eos", "--header", "Authorization=Bearer x",
                                        "--timeout-s", "5", "--client-threads", "3", "--out", "o"});
  const auto& r = o.request;
  EXPECT_EQ(r.url, "http://127.0.0.1:8080");
  EXPECT_EQ(r.protocol, remote::RemoteProtocol::kOpenAi);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.endpoint, remote::OpenAiEndpoint::kCompletions);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.ignore_eos);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].name, "Authorization");
  EXPECT_EQ(r.headers[0].value, "Bearer x");
  EXPECT_DOUBLE_EQ(r.timeout_s, 5);
  EXPECT_EQ(r.io_threads, 3);
  EXPECT_EQ(o.out, "o");
}

TEST(LoadCommand, DefaultsAreKServeWithStreamingAndIgnoreEos) {
  const auto o = parse_command(define_load_flags, {"http://127.0.0.1:8000"});
  EXPECT_EQ(o.request.protocol, remote::RemoteProtocol::kKServe);
  EXPECT_EQ(o.request.tensors, remote::TensorEncoding::kAuto);
  EXPECT_TRUE(o.request.stream);
  EXPECT_TRUE(o.request.ignore_eos);
  EXPECT_TRUE(o.request.headers.empty());
}

TEST(LoadCommand, PlainHttpRequestAndConcurrencyLevels) {
  const auto o = parse_command(define_load_flags, {"http://127.0.0.1:8000/health", "--protocol", "http", "--method", "POST",
                                                   "--content-type", "text/plain", "--concurrency", "1,8"});
  EXPECT_EQ(o.request.protocol, remote::RemoteProtocol::kHttp);
  EXPECT_EQ(o.request.plain.method, remote::HttpMethod::kPost);
  EXPECT_EQ(o.request.plain.content_type, "text/plain");
  EXPECT_EQ(o.measurement.concurrency, (std::vector<int>{1, 8}));
}

TEST(LoadCommand, UnknownProtocolOrMethodIsRefused) {
  EXPECT_NE(parse_error(define_load_flags, {"http://x", "--protocol", "grpc"}).find("--protocol"), std::string::npos);
  EXPECT_NE(parse_error(define_load_flags, {"http://x", "--method", "DELETE"}).find("--method"), std::string::npos);
  EXPECT_NE(parse_error(define_load_flags, {}).find("url"), std::string::npos);
}

TEST(ServeCommand, OneModelWithVariantsAndWeights) {
  const auto o = parse_command(define_serve_flags,
                               {"--model", "m.onnx", "--name", "resnet", "-b", "onnxruntime,openvino", "--weights", "90,10",
                                "--instances", "2", "--max-batch", "8", "--batch-delay-us", "500", "--opt", "k=v", "--out", "o"});
  EXPECT_EQ(o.model.model_file, "m.onnx");
  EXPECT_EQ(o.model.name, "resnet");
  EXPECT_EQ(o.model.backends, (std::vector<std::string>{"onnxruntime", "openvino"}));
  EXPECT_EQ(o.model.weights, (std::vector<double>{90, 10}));
  EXPECT_EQ(o.model.instances, 2);
  EXPECT_EQ(o.model.batching.max_batch_size, 8);
  EXPECT_EQ(o.model.options.at("k"), "v");
  EXPECT_EQ(o.out, "o");
  EXPECT_TRUE(o.server_settings.empty());
}

TEST(ServeCommand, ServerFlagsSetOnlyTheFieldsGiven) {
  const auto o = parse_command(define_serve_flags, {"--model", "m.onnx", "--port", "9000", "--no-grpc", "--io-threads", "3"});
  serve::ServeConfig config;
  config.host = "file-host";  // as a --config file could have said
  for (const auto& set : o.server_settings) set(config);
  EXPECT_EQ(config.http_port, 9000);
  EXPECT_EQ(config.grpc_port, -1);
  EXPECT_EQ(config.io_threads, 3);
  EXPECT_EQ(config.host, "file-host");  // not given: the file's value stands
}

TEST(ServeCommand, ConflictingFlagsAreRefused) {
  EXPECT_NE(parse_error(define_serve_flags, {"--config", "r.yaml", "--model", "m.onnx"}).find("excludes"), std::string::npos);
  EXPECT_NE(parse_error(define_serve_flags, {"--grpc-port", "9001", "--no-grpc"}).find("excludes"), std::string::npos);
  EXPECT_NE(parse_error(define_serve_flags, {"--grpc-port", "70000"}).find("--grpc-port"), std::string::npos);
  EXPECT_NE(parse_error(define_serve_flags, {"--opt", "novalue"}).find("--opt"), std::string::npos);
}

TEST(SweepCommand, GuidedSearchNeedsItsTarget) {
  const auto o = parse_command(define_sweep_flags, {"s.yaml", "--search", "--p99-ms", "5", "--fresh", "--max-duration", "60"});
  EXPECT_EQ(o.study_file, "s.yaml");
  EXPECT_TRUE(o.search);
  EXPECT_DOUBLE_EQ(o.p99_ms, 5);
  EXPECT_TRUE(o.fresh);
  EXPECT_FALSE(o.dry_run);
  EXPECT_DOUBLE_EQ(o.max_duration_s, 60);
  EXPECT_NE(parse_error(define_sweep_flags, {"s.yaml", "--search"}).find("--p99-ms"), std::string::npos);
  EXPECT_NE(parse_error(define_sweep_flags, {"s.yaml", "--p99-ms", "5"}).find("--search"), std::string::npos);
}

TEST(PipelineCommand, OverridesOnlyWhatIsGiven) {
  const auto defaults = parse_command(define_pipeline_flags, {"p.yaml"});
  EXPECT_EQ(defaults.overrides.warmup, -1);  // the file's
  EXPECT_DOUBLE_EQ(defaults.overrides.timeout_ms, -1);
  EXPECT_FALSE(defaults.scenario_given);
  EXPECT_FALSE(defaults.runs_given);

  const auto o = parse_command(define_pipeline_flags, {"p.yaml", "--modes", "serial,threads", "--warmup", "3", "--timeout-ms",
                                                       "0", "--scenario", "server", "--runs", "50"});
  EXPECT_EQ(o.overrides.modes,
            (std::vector<result::PipelineMode>{result::PipelineMode::kSerial, result::PipelineMode::kThreads}));
  EXPECT_EQ(o.overrides.warmup, 3);
  EXPECT_DOUBLE_EQ(o.overrides.timeout_ms, 0);
  EXPECT_TRUE(o.scenario_given);
  EXPECT_TRUE(o.runs_given);
  const auto load = load_request(o);
  EXPECT_EQ(load.scenario.name, loadgen::Scenario::kServer);
  EXPECT_TRUE(load.scenario_given);
  EXPECT_FALSE(load.concurrency_given);
}

TEST(PipelineCommand, AnUnknownModeIsRefused) {
  EXPECT_NE(parse_error(define_pipeline_flags, {"p.yaml", "--modes", "serial,fibers"}).find("--modes"), std::string::npos);
}

TEST(PipelineCommand, OneConcurrencyLevelPerInvocation) {
  const auto o = parse_command(define_pipeline_flags, {"p.yaml", "--concurrency", "1,2"});
  try {
    load_request(o);
    FAIL() << "two concurrency levels were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--concurrency"), std::string::npos);
  }
}

TEST(RecommendCommand, ConstraintsAreSetOnlyWhenGiven) {
  const auto none = parse_command(define_recommend_flags, {"results/"});
  EXPECT_FALSE(none.constraints.p99_ms);
  EXPECT_FALSE(none.constraints.max_accuracy_loss_pct);
  EXPECT_FALSE(none.peak_gflops);

  const auto o = parse_command(define_recommend_flags, {"a.json", "b.json", "--p99-ms", "10", "--max-accuracy-loss", "0",
                                                        "--energy", "--peak-gflops", "100", "--json"});
  EXPECT_EQ(o.results, (std::vector<std::string>{"a.json", "b.json"}));
  ASSERT_TRUE(o.constraints.p99_ms);
  EXPECT_DOUBLE_EQ(*o.constraints.p99_ms, 10);
  ASSERT_TRUE(o.constraints.max_accuracy_loss_pct);  // 0 % is a limit, not "not given"
  EXPECT_DOUBLE_EQ(*o.constraints.max_accuracy_loss_pct, 0);
  EXPECT_TRUE(o.constraints.energy);
  EXPECT_DOUBLE_EQ(*o.peak_gflops, 100);
  EXPECT_TRUE(o.as_json);
  EXPECT_NE(parse_error(define_recommend_flags, {"r", "--max-accuracy-loss", "150"}).find("--max-accuracy-loss"),
            std::string::npos);
  EXPECT_NE(parse_error(define_recommend_flags, {"r", "--p99-ms", "-1"}).find("--p99-ms"), std::string::npos);
}

TEST(CompareCommand, TheRegressionGateIsAlsoThePracticalThreshold) {
  const auto defaults = parse_command(define_compare_flags, {"a.json", "b.json"});
  EXPECT_DOUBLE_EQ(defaults.settings.threshold_pct, report::CompareSettings{}.threshold_pct);
  EXPECT_FALSE(defaults.fail_on_regression_pct);

  const auto o = parse_command(define_compare_flags,
                               {"a.json", "b.json", "--threshold", "2", "--fail-on-regression", "7", "--seed", "9", "--json"});
  EXPECT_EQ(o.baseline, "a.json");
  EXPECT_EQ(o.candidate, "b.json");
  EXPECT_DOUBLE_EQ(*o.fail_on_regression_pct, 7);
  EXPECT_DOUBLE_EQ(o.settings.threshold_pct, 7);
  EXPECT_EQ(o.settings.seed, 9u);
  EXPECT_TRUE(o.as_json);
  EXPECT_NE(parse_error(define_compare_flags, {"a", "b", "--alpha", "0.9"}).find("--alpha"), std::string::npos);
  EXPECT_NE(parse_error(define_compare_flags, {"a"}).find("candidate"), std::string::npos);
}

TEST(ReportCommand, OutputsChosenByFlags) {
  const auto o = parse_command(define_report_flags, {"r1", "r2", "--csv", "-", "--html", "r.html", "--md"});
  EXPECT_EQ(o.results, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(o.csv_path, "-");
  EXPECT_EQ(o.html_path, "r.html");
  EXPECT_TRUE(o.markdown);
  const auto plain = parse_command(define_report_flags, {"r1"});
  EXPECT_FALSE(plain.markdown);
  EXPECT_TRUE(plain.csv_path.empty());
}

TEST(ZooCommand, BuildBecomesTheDriversArguments) {
  const auto o =
      parse_command(define_zoo_flags, {"--models-dir", "m", "build", "resnet50", "bert", "--formats", "onnx,tflite", "--force"});
  EXPECT_EQ(o.action, ZooAction::kBuild);
  EXPECT_EQ(zoo_driver_arguments(o), (std::vector<std::string>{"--models-dir", "m", "build", "resnet50", "bert", "--formats",
                                                               "onnx", "tflite", "--force"}));
  const auto list = parse_command(define_zoo_flags, {"list", "--json"});
  EXPECT_EQ(list.action, ZooAction::kList);
  EXPECT_EQ(zoo_driver_arguments(list), (std::vector<std::string>{"list", "--json"}));
  EXPECT_FALSE(parse_error(define_zoo_flags, {}).empty());         // a subcommand is required
  EXPECT_FALSE(parse_error(define_zoo_flags, {"build"}).empty());  // and build needs names
}

TEST(SmallCommands, WorkerEnvAndBackends) {
  const auto worker = parse_command(define_worker_flags, {"--cell", "c.json", "--result", "r.json"});
  EXPECT_EQ(worker.cell_path, "c.json");
  EXPECT_EQ(worker.result_path, "r.json");
  EXPECT_TRUE(parse_command(define_env_flags, {"--json"}).as_json);
  EXPECT_FALSE(parse_command(define_env_flags, {}).as_json);
  EXPECT_TRUE(parse_command(define_backends_flags, {"--json"}).as_json);
  EXPECT_NE(parse_error(define_env_flags, {"--nope"}).find("--nope"), std::string::npos);
}

}  // namespace
}  // namespace infermark::cli

// `infermark pipeline`: serial and pipelined modes on a real two-stage split of tiny_cnn, checked
// for counts and for outputs (every mode computes what the whole model computes), plus the
// per-request timeout with its circuit breaker and a handoff that cannot work.
#include <gtest/gtest.h>

#include <fstream>

#include "core/npy.hpp"
#include "e2e/cli_test_support.hpp"
#include "result/run_result.hpp"

namespace {

using namespace infermark::testing;
namespace result = infermark::result;

class Pipeline : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_pipeline_"); }

  fs::path pipeline_file(const std::string& second_model, const std::string& second_backend, const std::string& extra) {
    const auto path = dir_ / "pipeline.yaml";
    std::ofstream(path) << "name: tiny\npipeline:\n  stages:\n"
                        << "    - {name: encoder, model: " << (kModels / "tiny_encoder.onnx").string()
                        << ", backend: onnxruntime, threads: 1}\n"
                        << "    - {name: head, model: " << (kModels / second_model).string() << ", backend: " << second_backend
                        << ", threads: 1}\n"
                        << extra;
    return path;
  }
  result::RunResult result(const std::string& mode) {
    return result::read_run_result((dir_ / "results" / "pipeline-tiny" / ("tiny." + mode + ".json")).string());
  }
  std::vector<double> logits(const result::RunResult& r) {
    return infermark::to_doubles(infermark::read_npy(fs::path(r.outputs_dir) / "logits.npy", "logits"));
  }
};

}  // namespace

TEST_F(Pipeline, EveryModeCompletesEveryRequestAndComputesTheWholeModel) {
  const auto file =
      pipeline_file("tiny_head.onnx", "onnxruntime", "modes: [serial, threads, processes]\nrequests: 30\nwarmup: 2\n");
  const auto r = infermark("pipeline " + file.string() + " --out " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("predicted req/s"), std::string::npos) << r.out;

  // The whole network on the same seeded input: the reference the split must reproduce.
  const auto whole = infermark("run " + (kModels / "tiny_cnn.onnx").string() + " -b onnxruntime --runs 3 --warmup 0 --out " +
                               (dir_ / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::vector<double> expected;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "whole"))
    if (entry.path().filename() == "logits.npy") expected = infermark::to_doubles(infermark::read_npy(entry.path(), "logits"));
  ASSERT_EQ(expected.size(), 10u);

  for (const std::string mode : {"serial", "threads", "processes"}) {
    const auto res = result(mode);
    ASSERT_EQ(res.status, infermark::result::CellStatus::kOk) << mode << ": " << res.error;
    EXPECT_EQ(infermark::result::scenario_label(res.scenario), "pipeline-" + mode);
    ASSERT_TRUE(res.pipeline) << mode;
    const auto& counts = res.pipeline->requests;
    EXPECT_EQ(counts.completed, 30u) << mode;
    EXPECT_EQ(counts.dropped, 0u) << mode;
    EXPECT_EQ(res.samples_ms.size(), 30u) << mode;
    EXPECT_GT(res.throughput.queries_per_s, 0) << mode;
    const auto& stages = res.pipeline->stages;
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0].processed, 30u);
    EXPECT_EQ(stages[1].description.at("input_binding"), "in place");  // ONNX Runtime overwrites the bound input
    EXPECT_EQ(stages[1].description.at("backend").at("name"), "onnxruntime");
    if (mode != "serial") {
      EXPECT_EQ(res.pipeline->max_abs_diff_vs_serial, 0.0) << mode;
    }
    const auto got = logits(res);
    ASSERT_EQ(got.size(), expected.size()) << mode;
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-4) << mode << " logit " << i;
  }
}

TEST_F(Pipeline, MixedFrameworksHandOverThroughSharedMemory) {
  if (!infermark::BackendRegistry{INFERMARK_PLUGIN_DIR}.is_available("openvino")) GTEST_SKIP() << "openvino is not built";
  const auto file = pipeline_file("tiny_head.onnx", "openvino", "modes: [serial, processes]\nrequests: 20\nwarmup: 2\n");
  const auto r = infermark("pipeline " + file.string() + " --out " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto res = result("processes");
  EXPECT_EQ(res.isolation, "worker process per stage");
  EXPECT_EQ(res.backend.name, "onnxruntime+openvino");
  ASSERT_TRUE(res.pipeline);
  EXPECT_EQ(res.pipeline->requests.completed, 20u);
  ASSERT_TRUE(res.pipeline->max_abs_diff_vs_serial);
  EXPECT_LT(*res.pipeline->max_abs_diff_vs_serial, 1e-4);
}

TEST_F(Pipeline, RequestsOverTheTimeoutAreCountedAndTheBreakerOpens) {
  // 1 microsecond: every request is past its deadline when it reaches the head.
  const auto file = pipeline_file("tiny_head.onnx", "onnxruntime",
                                  "modes: [serial, threads]\nrequests: 20\nwarmup: 1\ntimeout_ms: 0.001\nbreaker_after: 3\n"
                                  "breaker_cooldown_ms: 600000\n");
  const auto r = infermark("pipeline " + file.string() + " --out " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("opened 1 time(s)"), std::string::npos) << r.out;
  for (const std::string mode : {"serial", "threads"}) {
    const auto res = result(mode);
    ASSERT_TRUE(res.pipeline) << mode;
    const auto& counts = res.pipeline->requests;
    EXPECT_EQ(counts.completed, 0u) << mode;
    EXPECT_GE(counts.dropped, 3u) << mode;
    EXPECT_EQ(counts.dropped + counts.rejected_by_breaker, 20u) << mode;
    EXPECT_EQ(res.pipeline->stages.at(1).dropped_here, counts.dropped);
    ASSERT_TRUE(res.pipeline->breaker) << mode;
    EXPECT_EQ(res.pipeline->breaker->times_opened, 1u) << mode;
    EXPECT_EQ(res.pipeline->breaker->final_state, infermark::BreakerState::kOpen) << mode;
  }
  EXPECT_EQ(result("serial").pipeline->requests.dropped, 3u);  // one at a time: exactly the trip count
}

TEST_F(Pipeline, AHandoffThatCannotWorkNamesBothStagesInEveryMode) {
  // tiny_cnn takes a 1x3x32x32 image, not the encoder's 1x16 features.
  const auto file = pipeline_file("tiny_cnn.onnx", "onnxruntime", "modes: [threads, processes]\nrequests: 5\n");
  const auto r = infermark("pipeline " + file.string() + " --out " + (dir_ / "results").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const std::string mode : {"threads", "processes"}) {
    const auto res = result(mode);
    EXPECT_EQ(res.status, infermark::result::CellStatus::kFailed) << mode;
    EXPECT_NE(res.error.find("stage 'head'"), std::string::npos) << mode << ": " << res.error;
    EXPECT_NE(res.error.find("stage 'encoder'"), std::string::npos) << mode << ": " << res.error;
  }
}

TEST_F(Pipeline, TheServerScenarioDrivesEveryModeOpenLoop) {
  // The same seam as `run`: Poisson arrivals at --qps, latency from each scheduled arrival.
  const auto file = pipeline_file("tiny_head.onnx", "onnxruntime", "modes: [serial, threads, processes]\nwarmup: 2\n");
  const auto r =
      infermark("pipeline " + file.string() + " --scenario server --qps 50 --duration 2 --out " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("scheduled arrival"), std::string::npos) << r.out;  // the load table says where latency starts
  for (const std::string mode : {"serial", "threads", "processes"}) {
    const auto res = result(mode);
    ASSERT_EQ(res.status, infermark::result::CellStatus::kOk) << mode << ": " << res.error;
    EXPECT_EQ(infermark::result::scenario_label(res.scenario), "pipeline-" + mode);
    ASSERT_TRUE(res.scenario.parameters.request) << mode;
    EXPECT_EQ(res.scenario.parameters.request->name, infermark::loadgen::Scenario::kServer) << mode;
    EXPECT_EQ(res.scenario.parameters.lanes, mode == "serial" ? 1 : 4) << mode;  // the pipeline's depth
    ASSERT_EQ(res.phases.size(), 1u) << mode;
    const auto phase = infermark::result::to_json(res.phases[0]);  // as the result file has it
    EXPECT_EQ(phase.at("label"), "server") << mode;
    EXPECT_EQ(phase.at("target_qps"), 50.0) << mode;
    const auto issued = phase.at("issued").get<int>();
    EXPECT_GT(issued, 20) << mode;  // ~100 expected; a generous floor, never a timing claim
    EXPECT_EQ(phase.at("completed").get<int>() + phase.at("errors").get<int>() + phase.at("rejected").get<int>(), issued) << mode;
    EXPECT_EQ(phase.at("errors"), 0) << mode;
    ASSERT_TRUE(phase.at("latency_ms").is_object()) << mode;
    EXPECT_GT(phase.at("latency_ms").at("p99").get<double>(), 0) << mode;
    ASSERT_TRUE(res.latency_ms.has_value()) << mode;
    // The pipeline's own per-request figures cover the same requests.
    ASSERT_TRUE(res.pipeline) << mode;
    EXPECT_EQ(res.pipeline->requests.completed, phase.at("completed").get<std::uint64_t>()) << mode;
    EXPECT_EQ(res.pipeline->stages.at(1).processed, phase.at("completed").get<std::uint64_t>()) << mode;
  }
}

TEST_F(Pipeline, BadPipelineFilesAreRefusedWithTheCause) {
  auto write = [&](const std::string& text) {
    std::ofstream(dir_ / "bad.yaml") << text;
    return infermark("pipeline " + (dir_ / "bad.yaml").string() + " --out " + (dir_ / "results").string());
  };
  auto r = write("name: x\npipeline:\n  stages:\n    - {model: a.onnx, backend: onnxruntime}\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least two stages"), std::string::npos) << r.err;
  r = write(
      "name: x\nmodes: [serial, warp]\npipeline:\n  stages:\n    - {model: a.onnx, backend: onnxruntime}\n    - {model: b.onnx, "
      "backend: onnxruntime}\n");
  EXPECT_NE(r.err.find("modes: mode warp: unknown (expected serial, threads, processes)"), std::string::npos) << r.err;
  r = write(
      "name: x\npipeline:\n  stages:\n    - {model: a.onnx, backend: nosuch}\n    - {model: b.onnx, backend: onnxruntime}\n");
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  r = write(
      "name: x\nqueue_depth: 0\npipeline:\n  stages:\n    - {model: a.onnx, backend: onnxruntime}\n    - {model: b.onnx, "
      "backend: onnxruntime}\n");
  EXPECT_NE(r.err.find("queue_depth"), std::string::npos) << r.err;
}

// The OCR pipeline as shipped: PP-OCRv4 detection -> text-crops handoff -> recognition on the
// scene photos, every mode reading the same text, which is checked against the photos' labels.
TEST_F(Pipeline, OcrReadsTheSignsOfThePhotosInEveryMode) {
  const auto repository = kModels.parent_path();
  for (const auto* needed : {"ocr_det.onnx", "ocr_rec.onnx", "inputs/ocr_photos.npy", "inputs/ocr_rec.characters.txt"})
    ASSERT_TRUE(fs::exists(kModels / needed)) << needed << ": scripts/setup builds it";
  const auto r = infermark(
      "pipeline studies/pipeline-ocr.yaml --modes serial,processes --requests 5 --warmup 1 --out " + (dir_ / "results").string(),
      "cd " + repository.string() + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("character accuracy %"), std::string::npos) << r.out;
  for (const std::string mode : {"serial", "processes"}) {
    const auto res = result::read_run_result((dir_ / "results" / "pipeline-ocr" / ("ocr." + mode + ".json")).string());
    ASSERT_EQ(res.status, result::CellStatus::kOk) << mode << ": " << res.error;
    ASSERT_TRUE(res.pipeline && res.pipeline->text_check) << mode;
    EXPECT_EQ(res.pipeline->handoff, "text-crops");
    const auto& text = *res.pipeline->text_check;
    // Five requests take the five photos in turn: 5 + 4 + 2 + 2 + 5 lines.
    EXPECT_EQ(text.requests, 5u) << mode;
    EXPECT_EQ(text.lines_expected, 18u) << mode;
    ASSERT_EQ(text.samples.size(), 5u) << mode;
    // The parking sign, line by line: wrong boxes, a crop upside down or mirrored, or a wrong
    // normalisation would not read these.
    const auto& sign = text.samples[0];
    ASSERT_EQ(sign.sample, 0u);
    ASSERT_GE(sign.recognised.size(), 4u) << mode;
    EXPECT_EQ(std::vector<std::string>(sign.recognised.begin(), sign.recognised.begin() + 4),
              (std::vector<std::string>{"NOTICE", "DOUBLE", "PARKING", "PROHIBITED"}))
        << mode;
    EXPECT_GT(text.character_accuracy, 0.5) << mode;
    EXPECT_GT(text.lines_exact, 0u);
  }
  // The processes mode hands crops through shared memory: it reads what serial read.
  const auto serial = result::read_run_result((dir_ / "results" / "pipeline-ocr" / "ocr.serial.json").string());
  const auto processes = result::read_run_result((dir_ / "results" / "pipeline-ocr" / "ocr.processes.json").string());
  for (std::size_t i = 0; i < serial.pipeline->text_check->samples.size(); ++i)
    EXPECT_EQ(serial.pipeline->text_check->samples[i].recognised, processes.pipeline->text_check->samples[i].recognised) << i;
}

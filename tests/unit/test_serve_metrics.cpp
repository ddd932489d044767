// Triton's statistics under dynamic batching: a served ONNX Runtime variant (the tiny model the
// set-up exports) runs eight requests as one batch; each answer is checked against ONNX Runtime on
// its own input, and every nv_inference_* family and the statistics extension's document are
// checked to count what Triton's documentation says, and to agree with each other.
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <string>

#include "kserve/kserve_grpc_codec.hpp"
#include "remote/prometheus_text.hpp"
#include "serve/kserve_documents.hpp"
#include "serve/model_repository.hpp"

namespace infermark::serve {
namespace {

const std::filesystem::path kModels = INFERMARK_MODELS_DIR;
constexpr std::int64_t kBatch = 8;

const BackendRegistry& registry() {
  static const BackendRegistry r{INFERMARK_PLUGIN_DIR};
  return r;
}

// One model, one ONNX Runtime variant; the batcher waits up to 10 s for 8 rows, so 8 requests
// queued together run as exactly one batch.
ServeConfig tiny_cnn_config(int max_batch_size) {
  ModelSpec model;
  model.name = "tiny_cnn";
  model.file = kModels / "tiny_cnn.onnx";
  model.batching.max_batch_size = max_batch_size;
  model.batching.max_queue_delay_us = 10'000'000;
  VariantSpec variant;
  variant.name = variant.backend = "onnxruntime";
  model.variants.push_back(variant);
  ServeConfig config;
  config.models.push_back(model);
  return config;
}

// A 1x3x32x32 input whose values differ from every other request's.
Tensor distinct_input(int request) {
  Tensor x{"input", DType::kFloat32, {1, 3, 32, 32}, {}};
  x.data.resize(element_count(x.shape) * sizeof(float));
  for (std::size_t i = 0; i < x.element_count(); ++i)
    x.as<float>()[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.9 * request));
  return x;
}

// The value of `name`'s one series in a scrape (0 when absent), optionally the one with `label`.
double metric(const std::string& scrape, const std::string& name, const std::string& label = "") {
  double value = 0;
  for (const auto& sample : remote::parse_prometheus_text(scrape, {name}))
    if (sample.name == name && sample.series.find(label) != std::string::npos) value += sample.value;
  return value;
}

std::uint64_t count_of(const nlohmann::json& stat) { return stat.at("count").get<std::uint64_t>(); }
std::uint64_t ns_of(const nlohmann::json& stat) { return stat.at("ns").get<std::uint64_t>(); }

#define SKIP_UNLESS_ONNXRUNTIME \
  if (!registry().is_available("onnxruntime")) GTEST_SKIP() << "onnxruntime is not built in this configuration"

TEST(ServeMetrics, OneDynamicBatchOfEightCountsAsTritonDoes) {
  SKIP_UNLESS_ONNXRUNTIME;
  ServeMetrics metrics;
  ModelRepository repository(registry(), tiny_cnn_config(kBatch), metrics);
  auto& model = *repository.models().front();
  Variant& variant = *model.variants.front();
  ASSERT_EQ(variant.max_batch_rows(), kBatch) << variant.batching_note();

  std::vector<std::promise<InferenceResult>> answers(kBatch);
  for (int k = 0; k < kBatch; ++k)
    variant.submit({distinct_input(k)}, 0, [&answers, k](InferenceResult result) { answers[k].set_value(std::move(result)); });
  std::vector<InferenceResult> results;
  for (auto& answer : answers) results.push_back(answer.get_future().get());

  // Every request got its own row back: ONNX Runtime on that input alone.
  const auto reference_backend = registry().load("onnxruntime");
  const auto reference = (*reference_backend)->open(kModels / "tiny_cnn.onnx", {});
  for (int k = 0; k < kBatch; ++k) {
    ASSERT_EQ(results[k].status, InferStatus::kOk) << results[k].error;
    EXPECT_EQ(results[k].batch_rows, kBatch) << "request " << k << " did not run in the batch of 8";
    const auto expected = reference->infer({distinct_input(k)});
    const auto wanted = to_doubles(expected.at(0)), got = to_doubles(results[k].outputs.at(0));
    ASSERT_EQ(got.size(), wanted.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], wanted[i], 1e-4) << "request " << k << ", logit " << i;
  }

  // The statistics extension: 8 requests and 8 inferences in 1 execution; queue and compute per request.
  const auto stats = model_statistics(model);
  const auto& inference = stats.at("inference_stats");
  EXPECT_EQ(stats.at("inference_count"), kBatch);
  EXPECT_EQ(stats.at("execution_count"), 1);
  EXPECT_GT(stats.at("last_inference").get<std::int64_t>(), 0);
  for (const char* field : {"success", "queue", "compute_input", "compute_infer", "compute_output"})
    EXPECT_EQ(count_of(inference.at(field)), static_cast<std::uint64_t>(kBatch)) << field;
  EXPECT_EQ(count_of(inference.at("fail")), 0u);
  ASSERT_EQ(stats.at("batch_stats").size(), 1u);
  const auto& batch = stats.at("batch_stats").at(0);
  EXPECT_EQ(batch.at("batch_size"), kBatch);
  EXPECT_EQ(count_of(batch.at("compute_infer")), 1u);
  // Each of the 8 requests spent the whole execution computing: 8 executions' worth.
  EXPECT_EQ(ns_of(inference.at("compute_infer")), kBatch * ns_of(batch.at("compute_infer")));
  EXPECT_EQ(ns_of(inference.at("success")), ns_of(inference.at("queue")) + ns_of(inference.at("compute_infer")));

  // /metrics counts the same events: requests, rows, executions, and the same cumulative times.
  const auto scrape = metrics.scrape();
  EXPECT_EQ(metric(scrape, "nv_inference_request_success"), kBatch);
  EXPECT_EQ(metric(scrape, "nv_inference_request_failure"), 0);
  EXPECT_EQ(metric(scrape, "nv_inference_count"), kBatch);
  EXPECT_EQ(metric(scrape, "nv_inference_exec_count"), 1);
  EXPECT_EQ(metric(scrape, "nv_inference_pending_request_count"), 0);
  const auto us_of = [&](const char* field) { return static_cast<double>(ns_of(inference.at(field))) * 1e-3; };
  EXPECT_NEAR(metric(scrape, "nv_inference_request_duration_us"), us_of("success"), 1e-3);
  EXPECT_NEAR(metric(scrape, "nv_inference_queue_duration_us"), us_of("queue"), 1e-3);
  EXPECT_NEAR(metric(scrape, "nv_inference_compute_infer_duration_us"), us_of("compute_infer"), 1e-3);
  EXPECT_EQ(metric(scrape, "infermark_batch_size_count"), 1);
  EXPECT_EQ(metric(scrape, "infermark_batch_size_sum"), kBatch);
  EXPECT_EQ(metric(scrape, "infermark_request_duration_seconds_count", "phase=\"compute\""), kBatch);

  // The gRPC front answers the same document.
  inference::ModelStatisticsResponse response;
  kserve::fill_from_json({{"model_stats", {stats}}}, response);
  ASSERT_EQ(response.model_stats(0).batch_stats_size(), 1);
  EXPECT_EQ(response.model_stats(0).batch_stats(0).batch_size(), static_cast<std::uint64_t>(kBatch));
  EXPECT_EQ(response.model_stats(0).inference_stats().compute_infer().ns(), ns_of(inference.at("compute_infer")));
  repository.close();
}

TEST(ServeMetrics, FailuresCountOnlyAsFailuresWithTheirReason) {
  SKIP_UNLESS_ONNXRUNTIME;
  ServeMetrics metrics;
  ModelRepository repository(registry(), tiny_cnn_config(0), metrics);
  auto& model = *repository.models().front();
  std::promise<InferenceResult> answer;
  // A deadline already past: answered without running (Triton's CANCELED).
  model.variants.front()->submit({distinct_input(0)}, 1,
                                 [&answer](InferenceResult result) { answer.set_value(std::move(result)); });
  EXPECT_EQ(answer.get_future().get().status, InferStatus::kTimedOut);

  const auto stats = model_statistics(model);
  EXPECT_EQ(count_of(stats.at("inference_stats").at("fail")), 1u);
  EXPECT_EQ(count_of(stats.at("inference_stats").at("success")), 0u);
  EXPECT_EQ(count_of(stats.at("inference_stats").at("queue")), 0u);
  EXPECT_EQ(stats.at("inference_count"), 0);
  EXPECT_EQ(stats.at("execution_count"), 0);
  const auto scrape = metrics.scrape();
  EXPECT_EQ(metric(scrape, "nv_inference_request_failure", "reason=\"CANCELED\""), 1);
  EXPECT_EQ(metric(scrape, "nv_inference_request_failure"), 1);
  EXPECT_EQ(metric(scrape, "nv_inference_request_success"), 0);
  EXPECT_EQ(metric(scrape, "nv_inference_count"), 0);
  EXPECT_EQ(metric(scrape, "nv_inference_exec_count"), 0);
  EXPECT_EQ(metric(scrape, "nv_inference_queue_duration_us"), 0);
  repository.close();
}

}  // namespace
}  // namespace infermark::serve

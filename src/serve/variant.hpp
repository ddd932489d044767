// One served variant of a model: its backend, one session per instance, each on its own worker
// thread fed by the variant's dynamic batcher, and a circuit breaker that stops sending requests
// to a variant that keeps failing. A model faster than the hand-off to a worker (inline_below_us)
// runs on the thread that received the request while an instance is idle and nothing is queued.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/registry.hpp"
#include "core/circuit_breaker.hpp"
#include "serve/dynamic_batcher.hpp"
#include "serve/inference_statistics.hpp"
#include "serve/serve_config.hpp"
#include "serve/serve_metrics.hpp"
#include "serve/served_traffic.hpp"
#include "serve/variant_backend.hpp"

namespace infermark::serve {

class Variant {
 public:
  // Loads the backend and opens `instances` sessions (warmed up once each). Throws
  // infermark::Error naming the model, variant and backend when anything fails.
  Variant(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& spec, VariantMetrics metrics);
  ~Variant();
  Variant(const Variant&) = delete;
  Variant& operator=(const Variant&) = delete;

  const VariantSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const BackendInfo& backend() const { return backend_.info; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  const std::vector<EffectiveSetting>& effective_settings() const { return settings_; }
  double load_ms() const { return load_ms_; }
  // Rows per batch (1: unbatched) and, when batching was asked for but cannot apply, why.
  std::int64_t max_batch_rows() const { return batcher_->policy().max_batch_rows; }
  const std::string& batching_note() const { return batching_note_; }
  std::size_t queue_depth() const { return batcher_->depth(); }
  BreakerState breaker_state() const { return breaker_.state(); }
  // Totals for the statistics extension, counted with the same events as the nv_inference_* metrics.
  InferenceTotals stats() const { return statistics_.totals(); }
  const VariantMetrics& metrics() const { return metrics_; }
  ServedTraffic& traffic() { return traffic_; }
  const ServedTraffic& traffic() const { return traffic_; }
  ServedVariant description() const;

  // Queues one request (inputs in the model's order, already checked). `done` runs exactly once:
  // on a worker thread after inference, or at once when refused (queue full, breaker open).
  void submit(std::vector<Tensor> inputs, std::int64_t deadline_ns, std::function<void(InferenceResult)> done);
  // Stops taking requests; the workers finish what is queued and exit.
  void close();

 private:
  void serve_instance(std::size_t instance);
  // Runs one batch on a session the caller holds (its instance lock); answers every request.
  void execute(Session& session, std::vector<PendingInference>& batch);
  // Runs the request at once on the calling thread if the model is fast enough and an instance is idle.
  bool try_inline(PendingInference& request);
  void finish(PendingInference& request, InferenceResult result);

  VariantSpec spec_;
  VariantMetrics metrics_;
  VariantBackend backend_;  // declared before the sessions: outlives them
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<std::mutex>> instance_busy_;  // held while a session runs
  std::int64_t inline_below_ns_ = 0;                        // 0: never inline
  std::atomic<std::int64_t> recent_compute_ns_{0};          // moving average of one unbatched execution
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<EffectiveSetting> settings_;
  double load_ms_ = 0;
  std::string batching_note_;
  std::unique_ptr<DynamicBatcher> batcher_;  // made once the model's inputs say whether it batches
  CircuitBreaker breaker_;
  InferenceStatistics statistics_;
  ServedTraffic traffic_;
  std::vector<std::thread> workers_;
};

// Whether every input has a dynamic dimension 0 (the batch); otherwise why not.
std::string unbatchable_reason(const std::vector<TensorSpec>& inputs);

}  // namespace infermark::serve

#include "serve/variant.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"
#include "serve/batch_tensors.hpp"

namespace infermark::serve {
namespace {

// Zero inputs with `rows` rows, or nothing when a non-batch dimension is dynamic (no shape to guess).
std::optional<std::vector<Tensor>> warmup_inputs(const std::vector<TensorSpec>& specs, std::int64_t rows) {
  std::vector<Tensor> inputs;
  for (const auto& spec : specs) {
    Tensor tensor{spec.name, spec.dtype, spec.shape, {}};
    for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
      if (tensor.shape[d] >= 0) continue;
      if (d != 0) return std::nullopt;
      tensor.shape[d] = rows;
    }
    tensor.data.assign(element_count(tensor.shape) * dtype_size(spec.dtype), std::byte{0});
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

}  // namespace

std::string unbatchable_reason(const std::vector<TensorSpec>& inputs) {
  for (const auto& spec : inputs) {
    if (spec.shape.empty()) return "input '" + spec.name + "' is a scalar (no batch dimension)";
    if (spec.shape[0] >= 0)
      return "input '" + spec.name + "' has a fixed dimension 0 (" + format_shape(spec.shape, spec.dim_names) +
             "), so requests cannot be stacked";
  }
  return "";
}

Variant::Variant(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& spec, VariantMetrics metrics)
    : spec_(spec), metrics_(metrics), breaker_({model.breaker_trip_after, model.breaker_cooldown_ms}), statistics_(metrics) {
  const auto file = variant_file(model, spec);
  const auto started = mono_now_ns();
  try {
    backend_ = load_variant_backend(registry, model, spec, false);
    for (int i = 0; i < spec.instances; ++i) sessions_.push_back((*backend_.loaded)->open(file, backend_.requested));
    inputs_ = sessions_.front()->input_specs();
    outputs_ = sessions_.front()->output_specs();
    if (const auto warmup = warmup_inputs(inputs_, 1))
      for (auto& session : sessions_) {
        session->infer(*warmup);
        const auto again = mono_now_ns();  // the second run estimates the steady compute time
        session->infer(*warmup);
        recent_compute_ns_ = mono_now_ns() - again;
      }
    settings_ = sessions_.front()->effective_settings();
    if (auto version = sessions_.front()->library_version(); !version.empty()) backend_.info.version = std::move(version);
  } catch (const std::exception& e) {
    throw Error(describe_variant(model, spec) + ": " + e.what());
  }
  load_ms_ = static_cast<double>(mono_now_ns() - started) * 1e-6;
  BatchPolicy policy;
  policy.max_queue = model.max_queue;
  if (model.batching.max_batch_size > 1) {
    batching_note_ = unbatchable_reason(inputs_);
    if (batching_note_.empty()) {
      policy.max_batch_rows = model.batching.max_batch_size;
      policy.max_queue_delay = std::chrono::microseconds(model.batching.max_queue_delay_us);
      policy.preferred_rows = model.batching.preferred_batch_sizes;
    } else {
      batching_note_ = "served unbatched: " + batching_note_;
    }
  }
  // Batch sizes the batcher aims for are prepared now, so no client pays a framework's first-shape cost.
  if (policy.max_batch_rows > 1) {
    auto sizes = policy.preferred_rows;
    sizes.push_back(policy.max_batch_rows);
    for (auto rows : sizes)
      if (const auto warmup = warmup_inputs(inputs_, rows))
        for (auto& session : sessions_) session->infer(*warmup);
  }
  // Inline runs only when nothing would be batched (see try_inline).
  if (policy.max_batch_rows <= 1) inline_below_ns_ = static_cast<std::int64_t>(model.inline_below_us * 1000);
  batcher_ = std::make_unique<DynamicBatcher>(policy);
  for (std::size_t i = 0; i < sessions_.size(); ++i) instance_busy_.push_back(std::make_unique<std::mutex>());
  for (std::size_t i = 0; i < sessions_.size(); ++i) workers_.emplace_back([this, i] { serve_instance(i); });
}

ServedVariant Variant::description() const {
  ServedVariant d{backend_.model_name,
                  backend_.model_file,
                  spec_.name,
                  backend_.info,
                  backend_.requested,
                  settings_,
                  inputs_,
                  outputs_,
                  load_ms_,
                  {},
                  std::nullopt};
  auto& s = d.serving;
  s.weight = spec_.weight;
  s.instances = spec_.instances;
  s.max_batch_size = max_batch_rows() > 1 ? max_batch_rows() : 0;
  s.max_queue_delay_us = batcher_->policy().max_queue_delay.count();
  s.inline_below_us = static_cast<double>(inline_below_ns_) * 1e-3;
  s.batching_note = batching_note_;
  return d;
}

Variant::~Variant() {
  close();
  for (auto& worker : workers_) worker.join();
}

void Variant::close() { batcher_->close(); }

void Variant::submit(std::vector<Tensor> inputs, std::int64_t deadline_ns, std::function<void(InferenceResult)> done) {
  const auto now = mono_now_ns();
  if (!breaker_.admit(now)) {
    InferenceResult refused{
        InferStatus::kBreakerOpen, "variant '" + spec_.name + "' is failing: its circuit breaker is open", {}};
    statistics_.record_failure(failure_reason(refused.status), 0);
    done(std::move(refused));
    return;
  }
  PendingInference request;
  request.rows = batch_rows(inputs);
  request.signature = batch_signature(inputs);
  request.inputs = std::move(inputs);
  request.enqueued_ns = now;
  request.deadline_ns = deadline_ns;
  request.done = std::move(done);
  if (try_inline(request)) return;
  if (!batcher_->submit(request)) {
    breaker_.release();  // a refusal says nothing about the variant's health
    statistics_.record_failure(failure_reason(InferStatus::kQueueFull), mono_now_ns() - request.enqueued_ns);
    request.done({InferStatus::kQueueFull,
                  "variant '" + spec_.name + "' queue is full (" + std::to_string(batcher_->policy().max_queue) + " waiting)",
                  {}});
    return;
  }
  metrics_.pending->Set(static_cast<double>(batcher_->depth()));
}

void Variant::finish(PendingInference& request, InferenceResult result) {
  const bool failed = result.status == InferStatus::kFailed || result.status == InferStatus::kTimedOut;
  const auto now = mono_now_ns();
  if (result.status == InferStatus::kOk)
    statistics_.record_success(request.rows, result.queue_ns, result.compute_ns);
  else
    statistics_.record_failure(failure_reason(result.status), now - request.enqueued_ns);
  breaker_.record(failed, now);
  metrics_.breaker_open->Set(breaker_.state() == BreakerState::kClosed ? 0 : 1);
  request.done(std::move(result));
}

bool Variant::try_inline(PendingInference& request) {
  // A hand-off to a worker and back costs two thread wake-ups; for a model faster than that, the
  // hand-off is most of the latency. Queued requests keep their turn: inline only on an empty queue.
  if (inline_below_ns_ <= 0 || recent_compute_ns_.load(std::memory_order_relaxed) >= inline_below_ns_ || !batcher_->idle())
    return false;
  for (std::size_t i = 0; i < sessions_.size(); ++i) {
    std::unique_lock busy(*instance_busy_[i], std::try_to_lock);
    if (!busy.owns_lock()) continue;
    std::vector<PendingInference> batch;
    batch.push_back(std::move(request));
    metrics_.inline_executions->Increment();
    execute(*sessions_[i], batch);
    return true;
  }
  return false;
}

void Variant::serve_instance(std::size_t instance) {
  for (;;) {
    auto batch = batcher_->next_batch();
    if (batch.empty()) return;
    metrics_.pending->Set(static_cast<double>(batcher_->depth()));
    std::lock_guard busy(*instance_busy_[instance]);
    execute(*sessions_[instance], batch);
  }
}

void Variant::execute(Session& session, std::vector<PendingInference>& batch) {
  const auto started = mono_now_ns();
  // Requests past their deadline are answered without running them.
  std::vector<PendingInference> live;
  for (auto& request : batch) {
    if (request.deadline_ns > 0 && started > request.deadline_ns)
      finish(
          request,
          {InferStatus::kTimedOut, "timed out in the queue of variant '" + spec_.name + "'", {}, started - request.enqueued_ns});
    else
      live.push_back(std::move(request));
  }
  if (live.empty()) return;
  std::vector<const std::vector<Tensor>*> parts;
  std::vector<std::int64_t> rows;
  for (const auto& request : live) {
    parts.push_back(&request.inputs);
    rows.push_back(request.rows);
  }
  std::int64_t total_rows = 0;
  for (auto r : rows) total_rows += r;
  std::vector<std::vector<Tensor>> outputs;
  std::string error;
  try {
    // One request needs no stacking: its own tensors go to the framework.
    outputs = live.size() == 1 ? std::vector<std::vector<Tensor>>{session.infer(live.front().inputs)}
                               : split_batch(session.infer(concatenate_batch(parts)), rows);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const auto ended = mono_now_ns();
  if (live.size() == 1 && error.empty()) {
    const auto previous = recent_compute_ns_.load(std::memory_order_relaxed);
    recent_compute_ns_.store(previous + (ended - started - previous) / 8, std::memory_order_relaxed);
  }
  if (error.empty()) statistics_.record_execution(total_rows, ended - started);
  for (std::size_t i = 0; i < live.size(); ++i) {
    InferenceResult result;
    result.queue_ns = started - live[i].enqueued_ns;
    result.compute_ns = ended - started;
    result.batch_rows = total_rows;
    if (!error.empty()) {
      result.status = InferStatus::kFailed;
      result.error = spec_.backend + " failed: " + error;
    } else {
      result.outputs = std::move(outputs[i]);
    }
    finish(live[i], std::move(result));
  }
}

}  // namespace infermark::serve

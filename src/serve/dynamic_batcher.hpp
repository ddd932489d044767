// A variant's request queue and its dynamic batching policy (as Triton's dynamic batcher): a
// bounded queue; an instance takes the oldest request and, within max_queue_delay, gathers
// compatible requests until the batch reaches a preferred size or the maximum.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace infermark::serve {

enum class InferStatus { kOk, kQueueFull, kTimedOut, kFailed, kBreakerOpen, kShuttingDown };

struct InferenceResult {
  InferStatus status = InferStatus::kOk;
  std::string error;            // why, when not kOk
  std::vector<Tensor> outputs;  // this request's rows
  std::int64_t queue_ns = 0;    // enqueued until its batch started
  std::int64_t compute_ns = 0;  // the batch's inference
  std::int64_t batch_rows = 0;  // rows in the batch it ran in
};

struct PendingInference {
  std::vector<Tensor> inputs;  // in the model's input order
  std::int64_t rows = 1;
  std::string signature;                      // batch_signature(inputs)
  std::int64_t enqueued_ns = 0;               // monotonic
  std::int64_t deadline_ns = 0;               // monotonic; 0: none
  std::function<void(InferenceResult)> done;  // called exactly once, on a worker thread
  std::uint64_t sequence = 0;                 // set by the batcher
};

struct BatchPolicy {
  std::int64_t max_batch_rows = 1;  // 1: unbatched
  std::chrono::microseconds max_queue_delay{0};
  std::vector<std::int64_t> preferred_rows;
  std::size_t max_queue = 128;  // requests waiting; beyond it submit() refuses
};

class DynamicBatcher {
 public:
  explicit DynamicBatcher(BatchPolicy policy) : policy_(std::move(policy)) {}

  // False when the queue is full or closed; the request is then untouched (its callback not called).
  bool submit(PendingInference& request);
  // Blocks until a batch is ready; empty once closed and drained.
  std::vector<PendingInference> next_batch();
  // No new requests; workers still receive what is queued, then empty batches.
  void close();
  std::size_t depth() const;
  // Open and nothing waiting: a request may run at once without overtaking a queued one.
  bool idle() const;
  const BatchPolicy& policy() const { return policy_; }

 private:
  std::int64_t ready_rows(const std::string& signature) const;  // compatible rows queued, capped at the maximum
  bool is_preferred(std::int64_t rows) const;

  BatchPolicy policy_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<PendingInference> queue_;
  std::uint64_t next_sequence_ = 0;
  bool closed_ = false;
};

}  // namespace infermark::serve

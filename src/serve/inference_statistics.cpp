#include "serve/inference_statistics.hpp"

#include <algorithm>
#include <chrono>

namespace infermark::serve {
namespace {

double us(std::int64_t ns) { return static_cast<double>(ns) * 1e-3; }
double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

void DurationStat::add(std::int64_t duration_ns) {
  count += 1;
  ns += static_cast<std::uint64_t>(std::max<std::int64_t>(duration_ns, 0));
}

DurationStat& DurationStat::operator+=(const DurationStat& other) {
  count += other.count;
  ns += other.ns;
  return *this;
}

InferenceTotals& InferenceTotals::operator+=(const InferenceTotals& other) {
  inference_count += other.inference_count;
  execution_count += other.execution_count;
  last_inference_ms = std::max(last_inference_ms, other.last_inference_ms);
  success += other.success;
  fail += other.fail;
  queue += other.queue;
  compute_infer += other.compute_infer;
  for (const auto& [rows, stat] : other.batches) batches[rows] += stat;
  return *this;
}

FailureReason failure_reason(InferStatus status) {
  switch (status) {
    case InferStatus::kQueueFull:
    case InferStatus::kBreakerOpen:
    case InferStatus::kShuttingDown:
      return FailureReason::kRejected;
    case InferStatus::kTimedOut:
      return FailureReason::kCanceled;
    case InferStatus::kFailed:
      return FailureReason::kBackend;
    case InferStatus::kOk:
      break;
  }
  return FailureReason::kOther;
}

void InferenceStatistics::record_success(std::int64_t rows, std::int64_t queue_ns, std::int64_t compute_ns) {
  // As Triton: a request's time runs from queueing to its outputs, and a request that shared a
  // batch spent the whole execution in it (eight requests in one batch add eight executions' time).
  const auto request_ns = queue_ns + compute_ns;
  {
    std::lock_guard lock(mutex_);
    totals_.inference_count += static_cast<std::uint64_t>(rows);
    totals_.success.add(request_ns);
    totals_.queue.add(queue_ns);
    totals_.compute_infer.add(compute_ns);
  }
  cells_.success->Increment();
  cells_.inferences->Increment(static_cast<double>(rows));
  cells_.request_us->Increment(us(request_ns));
  cells_.queue_us->Increment(us(queue_ns));
  cells_.compute_us->Increment(us(compute_ns));
  cells_.queue_seconds->Observe(seconds(queue_ns));
  cells_.compute_seconds->Observe(seconds(compute_ns));
}

void InferenceStatistics::record_failure(FailureReason reason, std::int64_t request_ns) {
  {
    std::lock_guard lock(mutex_);
    totals_.fail.add(request_ns);
  }
  cells_.failures[static_cast<std::size_t>(reason)]->Increment();
}

void InferenceStatistics::record_execution(std::int64_t rows, std::int64_t compute_ns) {
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  {
    std::lock_guard lock(mutex_);
    totals_.execution_count += 1;
    totals_.last_inference_ms = std::max<std::int64_t>(totals_.last_inference_ms, now_ms);
    totals_.batches[rows].add(compute_ns);
  }
  cells_.executions->Increment();
  cells_.batch_rows->Observe(static_cast<double>(rows));
}

InferenceTotals InferenceStatistics::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

}  // namespace infermark::serve

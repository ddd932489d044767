// A variant's inference statistics as Triton defines them. Each event (a request answered, a
// request failed, a batch executed) updates the statistics extension's totals (/v2/models/{m}/stats)
// and the nv_inference_* cells of /metrics in the same call, so the two always count the same things.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "serve/dynamic_batcher.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

// How often something happened and its cumulative time (the extension's $duration_stat).
struct DurationStat {
  std::uint64_t count = 0;
  std::uint64_t ns = 0;
  void add(std::int64_t duration_ns);
  DurationStat& operator+=(const DurationStat& other);
};

// Totals since the server started, as the statistics extension reports them.
struct InferenceTotals {
  std::uint64_t inference_count = 0;             // rows of successful requests
  std::uint64_t execution_count = 0;             // successful model executions (batches)
  std::int64_t last_inference_ms = 0;            // wall clock of the last execution, ms since the epoch
  DurationStat success;                          // successful requests, from queueing to outputs
  DurationStat fail;                             // failed requests, from queueing to the failure
  DurationStat queue;                            // successful requests' wait in the queue
  DurationStat compute_infer;                    // successful requests' execution: each counts its whole batch
  std::map<std::int64_t, DurationStat> batches;  // rows per execution -> executions and their time
  InferenceTotals& operator+=(const InferenceTotals& other);
};

// Triton's reason for an outcome that is not kOk.
FailureReason failure_reason(InferStatus status);

class InferenceStatistics {
 public:
  explicit InferenceStatistics(const VariantMetrics& cells) : cells_(cells) {}

  // A request answered with its outputs: `rows` rows, `queue_ns` waiting, `compute_ns` in its batch's execution.
  void record_success(std::int64_t rows, std::int64_t queue_ns, std::int64_t compute_ns);
  // A request refused or failed `request_ns` after it was queued.
  void record_failure(FailureReason reason, std::int64_t request_ns);
  // One successful execution of `rows` rows (one or more requests) that took `compute_ns`.
  void record_execution(std::int64_t rows, std::int64_t compute_ns);
  InferenceTotals totals() const;

 private:
  VariantMetrics cells_;
  mutable std::mutex mutex_;  // a snapshot sees every total from the same moment
  InferenceTotals totals_;
};

}  // namespace infermark::serve

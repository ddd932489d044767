// The single-stream scenario: one query at a time, each issued when the previous completes.
// Latencies go into a log allocated before the first query, so recording never allocates.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"

namespace infermark::loadgen {

struct SingleStreamConfig {
  int warmup_runs = 10;
  int timed_runs = 100;
};

struct SingleStreamLog {
  std::vector<double> latencies_ms;  // one per completed timed query, in issue order
  double first_warmup_ms = 0.0;      // the first inference, usually the slowest (lazy init)
  double wall_s = 0.0;               // first timed issue to last timed completion
  bool interrupted = false;          // stopped early by `stop`; the log holds what completed
};

// Runs warm-up then timed queries on `session`, which must already have its inputs bound.
// Setting `stop` (e.g. from a SIGINT handler) ends the run after the current query.
SingleStreamLog run_single_stream(Session& session, const SingleStreamConfig& config,
                                  const std::atomic<bool>* stop = nullptr);

}  // namespace infermark::loadgen

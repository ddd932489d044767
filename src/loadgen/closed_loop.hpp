// Closed-loop load: N clients, each issuing its next query when the previous one completes
// (single-stream is N = 1; offline and the concurrency scenario use N > 1). Latency is measured
// from each query's issue.
#pragma once

#include <atomic>
#include <cstdint>

#include "loadgen/conversation.hpp"
#include "loadgen/phase.hpp"
#include "loadgen/service_targets.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::loadgen {

struct ClosedLoopConfig {
  int concurrency = 1;
  // The run ends at max_duration_s (a hard cap), or once max_queries have been issued and
  // min_duration_s has passed. A run that ends without min_queries and min_duration_s met is
  // flagged (Phase::minimums_met), not hidden.
  std::uint64_t min_queries = 1;
  double min_duration_s = 0.0;
  std::uint64_t max_queries = 0;  // 0 = no count limit: run for max_duration_s
  double max_duration_s = 60.0;
  std::int64_t interval_ns = 1'000'000'000;
  std::size_t max_exact_samples = 1'000'000;
  std::uint64_t seed = 42;  // draws each query's sample (sample_for_query)
  ServiceTargets targets;   // what counts towards goodput
  // Each client a user in multi-turn conversations: turns in order, a think pause between them
  // (not latency), samples conversation x turns + turn.
  Conversation conversation;
  std::uint64_t first_conversation = 0;  // the library's conversation the first client starts on
};

// Runs until the limits say stop or `stop` is set; never throws for a failed query (it is an error).
Phase run_closed_loop(SystemUnderTest& system, const ClosedLoopConfig& config, const std::atomic<bool>* stop = nullptr,
                      const std::string& label = "");

// Warm-up: `queries` queries or `seconds` (whichever ends later) on every lane, not recorded. A
// conversation workload warms up on conversations from the library's second half, without pauses,
// so the measured conversations (from the first) start with nothing of theirs in an engine's cache.
void warm_up(SystemUnderTest& system, int concurrency, std::uint64_t queries, double seconds, std::uint64_t seed,
             const std::atomic<bool>* stop, const Conversation& conversation = {});

}  // namespace infermark::loadgen

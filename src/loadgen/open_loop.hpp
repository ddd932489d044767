// Open-loop (server) load: queries arrive on a schedule — Poisson or constant rate — whether or
// not earlier ones have finished, and wait in a bounded queue for a free lane. Latency runs from
// each query's *scheduled* arrival, so queueing behind a slow query is never hidden
// (no coordinated omission). Arrivals are drawn from a seeded generator as the run goes; the k-th
// arrival is query k and carries the sample drawn for k from the same seed.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "loadgen/conversation.hpp"
#include "loadgen/phase.hpp"
#include "loadgen/service_targets.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::loadgen {

enum class Arrivals { kPoisson, kConstant };
// How the scheduler waits for an arrival. kSpin sleeps, then spins the last 50 µs: arrivals leave
// within a few µs of their time, at the cost of a busy core share at high rates. kSleep only
// sleeps: a VM wakes tens of µs late (measured as issue lateness, and in latency, which runs from
// the scheduled arrival), for far less client CPU.
enum class Pacing { kSpin, kSleep };

// A stretch of the schedule at one arrival rate; a pulse is baseline, burst, baseline.
struct RateSegment {
  double duration_s = 10.0;
  double rate_qps = 10.0;
};

struct OpenLoopConfig {
  std::vector<RateSegment> schedule;  // scheduling stops at its end; the queue then drains
  Arrivals arrivals = Arrivals::kPoisson;
  Pacing pacing = Pacing::kSpin;
  std::uint64_t seed = 42;
  int lanes = 1;                   // worker threads serving the queue
  std::size_t max_queue = 10'000;  // arrivals beyond this many waiting are rejected
  double drain_timeout_s = 30.0;   // queries still queued after this are counted as errors
  std::int64_t interval_ns = 1'000'000'000;
  std::size_t max_exact_samples = 1'000'000;
  ServiceTargets targets;  // what counts towards goodput
  // Replay: the k-th arrival at this offset (ns from the start, non-decreasing) instead of a draw
  // from the schedule's rates, and query k carries sample k (modulo the library), not a drawn one.
  // The schedule then only sets the phase's length and its nominal rate.
  std::vector<std::int64_t> recorded_arrivals_ns;
  // With recorded arrivals: the sample each one carries, where it is not its index (a rank of a
  // distributed replay sends every ranks-th request of the trace: its own arrivals, their samples).
  std::vector<std::uint32_t> recorded_samples;
  // Multi-turn conversations (turns > 1): the schedule's arrivals start conversations over the
  // system's turn library; each later turn arrives its think time after the one before was
  // answered, its latency from then. The phase runs past the schedule's end until they finish.
  Conversation conversation;
};

Phase run_open_loop(SystemUnderTest& system, const OpenLoopConfig& config, const std::atomic<bool>* stop = nullptr,
                    const std::string& label = "");

}  // namespace infermark::loadgen

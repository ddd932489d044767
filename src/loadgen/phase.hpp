// The outcome of one measured phase of load: a whole closed- or open-loop run, one step of a
// ramp, or one part of a pulse. Patterns are built from phases.
#pragma once

#include <cstdint>
#include <string>

#include "loadgen/query_recorder.hpp"

namespace infermark::loadgen {

struct Phase {
  std::string label;         // "concurrency 10", "rate 50/s", "burst", ...
  int concurrency = 0;       // closed loop: clients; open loop: lanes serving the queue
  double target_qps = 0.0;   // open loop only
  double scheduled_s = 0.0;  // open loop only: the arrival schedule's length (duration_s adds the drain)
  std::uint64_t issued = 0;
  double duration_s = 0.0;      // first issue to last completion
  std::int64_t started_ns = 0;  // monotonic start of the phase
  bool interrupted = false;     // stopped by the user
  bool minimums_met = true;     // min queries and min duration reached before the cap
  QueryRecorder recorder;
  // Open loop only: how late the scheduler issued each query versus its scheduled time.
  stats::LatencyHistogram issue_lateness;
  // Open loop only: arrivals that found every lane busy (the in-flight limit reached) and waited.
  std::uint64_t waited_for_lane = 0;

  explicit Phase(const RecorderLimits& limits) : recorder(limits) {}
  double achieved_qps() const { return duration_s > 0 ? static_cast<double>(recorder.completed()) / duration_s : 0.0; }
  // Queries per second that met every target.
  double goodput_qps() const { return duration_s > 0 ? static_cast<double>(recorder.met_targets()) / duration_s : 0.0; }
};

}  // namespace infermark::loadgen

// Load patterns built from closed- and open-loop phases (the seeds' step ramp, soak and pulse),
// the search for the highest rate that meets an SLA, and the analysis of each.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loadgen/analysis.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/open_loop.hpp"

namespace infermark::loadgen {

// P99 of a phase in milliseconds (from its histogram).
double p99_ms(const Phase& phase);

// Limits on a phase's P99s: end-to-end latency and, for token-streaming systems, time to first
// token and time per output token (each 0: no limit).
struct SloLimits {
  double p99_ms = 0, ttft_p99_ms = 0, tpot_p99_ms = 0;
};
// P99 TTFT and TPOT of a phase's streamed requests, ms (0 when it streamed none), from one pass.
struct StreamedP99 {
  double ttft_ms = 0, tpot_ms = 0;
};
StreamedP99 streamed_p99(const Phase& phase);

// --- capacity --------------------------------------------------------------------------------
// Throughput (queries/s) with every lane busy in a closed loop for `seconds`.
double measure_capacity(SystemUnderTest& system, int lanes, double seconds, const std::atomic<bool>* stop);

// --- ramp --------------------------------------------------------------------------------------
struct RampConfig {
  bool by_rate = false;  // steps of arrival rate (open loop) instead of concurrency (closed loop)
  double step = 10;      // +10 clients per step, as the panoramic-analysis guide's step ramp; or +step queries/s
  double start = 0;      // first level; 0: 1 client (then step, 2*step, ...) or `step` queries/s
  int steps = 5;
  double step_duration_s = 10;
  OpenLoopConfig open_loop;      // arrivals, seed, lanes, queue, targets for rate steps
  ClosedLoopConfig closed_loop;  // seed and targets for client steps
  std::int64_t interval_ns = 1'000'000'000;
  // Several ranks: called before each step on every rank (false: stop the ramp), and the clients
  // this rank runs at a client step's level (default: the level).
  std::function<bool()> before_step;
  std::function<int(double)> clients_of_level;
  // Rate steps: stop after the first step that saturated (see saturation_of), as a request-rate
  // sweep does; `steps` is then the most it runs.
  bool until_saturation = false;
};
std::vector<double> ramp_levels(const RampConfig& config);
// Why an open-loop step shows the system saturated: errors, rejections (queue full), or its
// completions falling behind its arrivals (under 95% of the rate that arrived); none when it kept up.
std::optional<std::string> saturation_of(const Phase& step);
std::vector<Phase> run_ramp(SystemUnderTest& system, const RampConfig& config, const std::atomic<bool>* stop);

struct Knee {
  std::optional<std::size_t> step;  // index of the first step past the knee
  std::string reason;               // "throughput rose 2.1% (< 5%)", "P99 12.3 ms above the 10 ms SLA", or why none
};
// The knee: the first step whose throughput rises less than `min_gain` over the previous step,
// or whose P99s exceed the limits.
Knee find_knee(const std::vector<Phase>& steps, const SloLimits& limits, double min_gain = 0.05);

// --- highest rate meeting the SLA -----------------------------------------------------------------
struct MaxQpsSearch {
  double best_qps = 0.0;  // highest tried rate that met the SLA; 0 if none did
  std::vector<Phase> trials;
};
// Bisection on the arrival rate in (0, upper_qps]; a trial passes when its P99s are within the
// limits, nothing was rejected or failed, and it achieved at least 95% of the target rate.
MaxQpsSearch find_max_qps(SystemUnderTest& system, OpenLoopConfig trial, const SloLimits& limits, double upper_qps,
                          int iterations, const std::atomic<bool>* stop);
bool meets_slo(const Phase& phase, const SloLimits& limits);
inline bool meets_sla(const Phase& phase, double sla_p99_ms) { return meets_slo(phase, SloLimits{sla_p99_ms}); }

// --- soak and pulse analysis ------------------------------------------------------------------
struct TimedValue {
  double t_s;
  double value;
};
// Leak and drift verdicts from the RSS samples and the per-interval P99 over a soak, and for
// streamed requests the per-interval mean time per output token.
SoakAnalysis analyse_soak(const Phase& phase, const std::vector<TimedValue>& rss_mb);
// Baseline and peak P99, rejections and errors, and the time to recover after the burst.
PulseAnalysis analyse_pulse(const Phase& phase, const std::vector<RateSegment>& schedule);

}  // namespace infermark::loadgen

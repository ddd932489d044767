#include "loadgen/scenario.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "loadgen/live_stats.hpp"
#include "stats/histogram.hpp"

namespace infermark::loadgen {
namespace {

const std::vector<std::string> kScenarios{"single-stream", "concurrency", "offline", "server", "ramp", "soak", "pulse", "generation"};

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

ClosedLoopConfig closed_loop_config(const ScenarioSpec& spec, int concurrency) {
  ClosedLoopConfig c;
  c.concurrency = concurrency;
  c.min_queries = spec.min_queries;
  c.min_duration_s = spec.min_duration_s;
  c.max_queries = spec.max_queries;
  c.max_duration_s = spec.max_duration_s;
  return c;
}

OpenLoopConfig open_loop_config(const ScenarioSpec& spec, int lanes, std::vector<RateSegment> schedule) {
  OpenLoopConfig c;
  c.schedule = std::move(schedule);
  c.arrivals = spec.arrivals;
  c.seed = spec.seed;
  c.lanes = lanes;
  c.max_queue = spec.max_queue;
  return c;
}

// SLA verdict with the MLPerf-style early-stopping bound on what percentile the run supports.
nlohmann::json sla_verdict(const Phase& phase, double sla_p99_ms) {
  const auto& latency = phase.recorder.latency();
  // Queries above the SLA, counted from the histogram (exact up to its precision): values by rank
  // never decrease, so bisect for the highest rank still within the target.
  const auto threshold = static_cast<std::int64_t>(sla_p99_ms * 1e6);
  std::uint64_t within = 0, beyond = latency.count() + 1;  // rank `within` is <= target; `beyond` is not
  while (beyond - within > 1) {
    const auto mid = within + (beyond - within) / 2;
    (latency.value_at_rank(mid) <= threshold ? within : beyond) = mid;
  }
  const std::uint64_t over = latency.count() - within;
  const double claim = stats::claimable_percentile(latency.count(), over, 0.99);
  return {{"p99_ms_target", sla_p99_ms}, {"p99_ms", p99_ms(phase)}, {"passed", meets_sla(phase, sla_p99_ms)},
          {"queries_over_target", over}, {"claimable_percentile_at_target", claim},
          {"queries_needed_for_p99_claim", stats::min_queries_for_percentile(99.0, 0.99)},
          {"errors", phase.recorder.errors()}, {"rejected", phase.recorder.rejected()}};
}

void run_server(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop) {
  if (spec.find_max_qps) {
    const double capacity = measure_capacity(system, lanes, spec.capacity_probe_s, stop);
    out.parameters["capacity_qps"] = capacity;
    auto search = find_max_qps(system, open_loop_config(spec, lanes, {{spec.duration_s, capacity}}), spec.sla_p99_ms,
                               capacity * 1.2, 7, stop);
    nlohmann::json trials = nlohmann::json::array();
    for (auto& trial : search.trials) {
      trials.push_back({{"target_qps", trial.target_qps}, {"achieved_qps", trial.achieved_qps()}, {"p99_ms", p99_ms(trial)},
                        {"passed", meets_sla(trial, spec.sla_p99_ms)}});
      out.phases.push_back(std::move(trial));
    }
    out.analysis["max_qps_within_sla"] = search.best_qps;
    out.analysis["search"] = trials;
    // The headline is the best passing trial, or the last one tried.
    for (std::size_t i = 0; i < out.phases.size(); ++i)
      if (out.phases[i].target_qps == search.best_qps) out.headline = i;
    if (!out.headline && !out.phases.empty()) out.headline = out.phases.size() - 1;
    return;
  }
  out.phases.push_back(run_open_loop(system, open_loop_config(spec, lanes, {{spec.duration_s, spec.qps}}), stop, "server"));
  out.headline = 0;
  if (spec.sla_p99_ms > 0) out.analysis["sla"] = sla_verdict(out.phases[0], spec.sla_p99_ms);
}

void run_ramp_pattern(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop) {
  RampConfig ramp;
  ramp.by_rate = spec.ramp_by == "rate";
  ramp.step = spec.ramp_step;
  ramp.start = spec.ramp_start;
  ramp.steps = spec.ramp_steps;
  ramp.step_duration_s = spec.step_duration_s;
  ramp.open_loop = open_loop_config(spec, lanes, {});
  out.phases = run_ramp(system, ramp, stop);
  if (out.phases.empty()) return;
  const auto knee = find_knee(out.phases, spec.sla_p99_ms);
  // The headline is the last step before the knee: the highest load the system still sustains.
  out.headline = knee.step ? (*knee.step > 0 ? *knee.step - 1 : 0) : out.phases.size() - 1;
  out.analysis["summary_step"] = *out.headline;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& p : out.phases)
    steps.push_back({{"label", p.label}, {"throughput_qps", p.achieved_qps()}, {"p99_ms", p99_ms(p)}});
  out.analysis["ramp_by"] = spec.ramp_by;
  out.analysis["steps"] = steps;
  out.analysis["knee_step"] = knee.step ? nlohmann::json(*knee.step) : nlohmann::json(nullptr);
  out.analysis["knee_label"] = knee.step ? nlohmann::json(out.phases[*knee.step].label) : nlohmann::json(nullptr);
  out.analysis["knee_reason"] = knee.reason;
}

void run_soak(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop) {
  const double capacity = measure_capacity(system, lanes, spec.capacity_probe_s, stop);
  const double rate = spec.soak_share * capacity;
  out.parameters["capacity_qps"] = capacity;
  out.parameters["soak_qps"] = rate;
  auto config = open_loop_config(spec, lanes, {{spec.soak_duration_s, rate}});
  config.interval_ns = static_cast<std::int64_t>(spec.soak_interval_s * 1e9);
  out.measured_from_ns = mono_now_ns();
  out.phases.push_back(run_open_loop(system, config, stop, "soak"));
  out.headline = 0;
}

void run_pulse(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop) {
  const double capacity = measure_capacity(system, lanes, spec.capacity_probe_s, stop);
  const std::vector<RateSegment> schedule{{spec.pulse_baseline_s, spec.pulse_baseline_share * capacity},
                                          {spec.pulse_burst_s, spec.pulse_burst_share * capacity},
                                          {spec.pulse_recovery_s, spec.pulse_baseline_share * capacity}};
  out.parameters["capacity_qps"] = capacity;
  out.parameters["schedule"] = nlohmann::json::array();
  for (const auto& s : schedule) out.parameters["schedule"].push_back({{"duration_s", s.duration_s}, {"rate_qps", s.rate_qps}});
  auto config = open_loop_config(spec, lanes, schedule);
  config.interval_ns = 500'000'000;  // half-second resolution to time the recovery
  out.measured_from_ns = mono_now_ns();
  out.phases.push_back(run_open_loop(system, config, stop, "pulse"));
  out.headline = 0;
  out.analysis["pulse"] = analyse_pulse(out.phases[0], schedule);
}

}  // namespace

void validate(const ScenarioSpec& s) {
  require(std::find(kScenarios.begin(), kScenarios.end(), s.name) != kScenarios.end(),
          "--scenario " + s.name + ": unknown (single-stream, concurrency, offline, server, ramp, soak, pulse, generation)");
  require(s.concurrency >= 0, "--concurrency " + std::to_string(s.concurrency) + ": must be at least 1");
  require(s.name != "concurrency" || s.concurrency >= 1, "--scenario concurrency needs --concurrency N (N >= 1)");
  require(s.warmup_s >= 0, "--warmup-s must not be negative");
  require(s.min_duration_s >= 0, "--min-duration must not be negative");
  require(s.max_duration_s > 0, "--max-duration must be above 0 s");
  require(s.min_duration_s <= s.max_duration_s, "--min-duration exceeds --max-duration");
  require(s.max_queries == 0 || s.max_queries >= s.min_queries, "--runs/--max-queries is below --min-queries");
  require(s.sla_p99_ms >= 0, "--p99-ms " + std::to_string(s.sla_p99_ms) + ": an SLA cannot be negative");
  require(s.duration_s > 0, "--duration must be above 0 s");
  require(s.name != "server" || s.find_max_qps || s.qps > 0, "--scenario server needs --qps above 0 (or --find-max-qps)");
  require(s.qps >= 0, "--qps must not be negative");
  require(!s.find_max_qps || s.sla_p99_ms > 0, "--find-max-qps needs an SLA: --p99-ms");
  require(s.max_queue >= 1, "--max-queue must be at least 1");
  require(s.ramp_by == "concurrency" || s.ramp_by == "rate", "--ramp-by " + s.ramp_by + ": expected concurrency or rate");
  require(s.ramp_step > 0 && s.ramp_steps >= 1 && s.ramp_start >= 0, "--ramp-step and --ramp-steps must be positive");
  require(s.step_duration_s > 0, "--step-duration must be above 0 s");
  require(s.capacity_probe_s > 0, "--capacity-probe must be above 0 s");
  require(s.soak_share > 0 && s.soak_duration_s > 0 && s.soak_interval_s > 0, "--soak-share, --soak-duration and --soak-interval must be above 0");
  require(s.pulse_baseline_share > 0 && s.pulse_burst_share > 0, "--pulse-baseline and --pulse-burst shares must be above 0");
  require(s.pulse_baseline_s > 0 && s.pulse_burst_s > 0 && s.pulse_recovery_s > 0, "pulse phase durations must be above 0 s");
  require(s.prompt_tokens >= 1 && s.output_tokens >= 1, "--prompt-tokens and --output-tokens must be at least 1");
  require(s.prompt_tokens_stddev >= 0 && s.output_tokens_stddev >= 0, "token-length standard deviations must not be negative");
}

double planned_duration_s(const ScenarioSpec& s) {
  constexpr double kDrain = 30;  // open-loop drain timeout (OpenLoopConfig)
  if (s.name == "server")
    return s.find_max_qps ? s.capacity_probe_s + 7 * (s.duration_s + kDrain) : s.duration_s + kDrain;
  if (s.name == "ramp") return s.ramp_steps * (s.step_duration_s + (s.ramp_by == "rate" ? kDrain : 0));
  if (s.name == "soak") return s.capacity_probe_s + s.soak_duration_s + kDrain;
  if (s.name == "pulse") return s.capacity_probe_s + s.pulse_baseline_s + s.pulse_burst_s + s.pulse_recovery_s + kDrain;
  return s.max_duration_s;
}

int lanes_needed(const ScenarioSpec& spec, int logical_cores) {
  if (spec.name == "single-stream") return 1;
  if (spec.name == "generation") return std::max(1, spec.concurrency);  // sequences batched together
  if (spec.name == "ramp" && spec.ramp_by == "concurrency") {
    RampConfig ramp;
    ramp.step = spec.ramp_step;
    ramp.start = spec.ramp_start;
    ramp.steps = spec.ramp_steps;
    const auto levels = ramp_levels(ramp);
    return static_cast<int>(*std::max_element(levels.begin(), levels.end()));
  }
  return spec.concurrency > 0 ? spec.concurrency : std::max(1, logical_cores);
}

ScenarioOutcome run_scenario(SystemUnderTest& system, const ScenarioSpec& spec, int logical_cores, const std::atomic<bool>* stop) {
  validate(spec);
  require(spec.name != "generation", "--scenario generation: runs language models (.gguf) only");
  ScenarioOutcome out;
  const int lanes = std::min(lanes_needed(spec, logical_cores), system.lanes());
  out.parameters["lanes"] = lanes;
  warm_up(system, spec.name == "ramp" ? 1 : (spec.name == "single-stream" ? 1 : lanes), spec.warmup_queries, spec.warmup_s, stop);
  out.measured_from_ns = mono_now_ns();
  LiveStats::global().reset();  // live progress figures cover the measurement, not the warm-up
  if (spec.name == "single-stream" || spec.name == "concurrency" || spec.name == "offline") {
    out.phases.push_back(run_closed_loop(system, closed_loop_config(spec, spec.name == "single-stream" ? 1 : lanes), stop, spec.name));
    out.headline = 0;
  } else if (spec.name == "server") {
    run_server(system, spec, lanes, out, stop);
  } else if (spec.name == "ramp") {
    run_ramp_pattern(system, spec, lanes, out, stop);
  } else if (spec.name == "soak") {
    run_soak(system, spec, lanes, out, stop);
  } else {
    run_pulse(system, spec, lanes, out, stop);
  }
  out.interrupted = stop && stop->load();
  return out;
}

nlohmann::json phase_json(const Phase& p) {
  const auto& h = p.recorder.latency();
  nlohmann::json j{{"label", p.label}, {"concurrency", p.concurrency}, {"issued", p.issued},
                   {"completed", p.recorder.completed()}, {"errors", p.recorder.errors()}, {"rejected", p.recorder.rejected()},
                   {"duration_s", p.duration_s}, {"achieved_qps", p.achieved_qps()}, {"minimums_met", p.minimums_met},
                   {"interrupted", p.interrupted}};
  j["target_qps"] = p.target_qps > 0 ? nlohmann::json(p.target_qps) : nlohmann::json(nullptr);
  j["latency_ms"] = h.count() ? nlohmann::json{{"p50", ms(h.value_at_percentile(50))}, {"p90", ms(h.value_at_percentile(90))},
                                               {"p99", ms(h.value_at_percentile(99))}, {"max", ms(h.max())}, {"mean", h.mean() * 1e-6}}
                              : nlohmann::json(nullptr);
  const auto& late = p.issue_lateness;
  j["issue_lateness_us"] = late.count() ? nlohmann::json{{"p50", static_cast<double>(late.value_at_percentile(50)) * 1e-3},
                                                         {"p99", static_cast<double>(late.value_at_percentile(99)) * 1e-3},
                                                         {"max", static_cast<double>(late.max()) * 1e-3}}
                                        : nlohmann::json(nullptr);
  return j;
}

}  // namespace infermark::loadgen

#include "loadgen/scenario.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/named_enum.hpp"
#include "loadgen/generation_metrics.hpp"
#include "loadgen/live_stats.hpp"
#include "loadgen/rank_share.hpp"
#include "stats/histogram.hpp"

namespace infermark::loadgen {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

SloLimits slo_limits(const ScenarioSpec& spec) { return {spec.sla_p99_ms, spec.ttft_ms, spec.tpot_ms}; }

ClosedLoopConfig closed_loop_config(const ScenarioSpec& spec, int concurrency) {
  ClosedLoopConfig c;
  c.concurrency = concurrency;
  c.min_queries = spec.min_queries;
  c.min_duration_s = spec.min_duration_s;
  c.max_queries = spec.max_queries;
  c.max_duration_s = spec.max_duration_s;
  c.seed = spec.seed;
  c.targets = service_targets(spec);
  c.conversation = spec.conversation;
  return c;
}

OpenLoopConfig open_loop_config(const ScenarioSpec& spec, int lanes, std::vector<RateSegment> schedule) {
  OpenLoopConfig c;
  c.schedule = std::move(schedule);
  c.arrivals = spec.arrivals;
  c.pacing = spec.pacing;
  c.seed = spec.seed;
  c.lanes = lanes;
  c.max_queue = spec.max_queue;
  c.targets = service_targets(spec);
  c.conversation = spec.conversation;
  return c;
}

// Queries slower than `target_ms`, counted from the histogram (exact up to its precision): values
// by rank never decrease, so bisect for the highest rank still within the target.
std::uint64_t queries_over(const stats::LatencyHistogram& latency, double target_ms) {
  const auto threshold = static_cast<std::int64_t>(target_ms * 1e6);
  std::uint64_t within = 0, beyond = latency.count() + 1;  // rank `within` is <= target; `beyond` is not
  while (beyond - within > 1) {
    const auto mid = within + (beyond - within) / 2;
    (latency.value_at_rank(mid) <= threshold ? within : beyond) = mid;
  }
  return latency.count() - within;
}

// SLA verdict with the MLPerf-style early-stopping bound on what percentile the run supports.
SlaVerdict sla_verdict(const Phase& phase, const ScenarioSpec& spec) {
  SlaVerdict verdict;
  verdict.p99_ms = p99_ms(phase);
  verdict.passed = meets_slo(phase, slo_limits(spec));
  verdict.queries_needed_for_p99_claim = stats::min_queries_for_percentile(99.0, 0.99);
  verdict.errors = phase.recorder.errors();
  verdict.rejected = phase.recorder.rejected();
  verdict.goodput_qps = phase.goodput_qps();
  verdict.good_queries = phase.recorder.met_targets();
  if (spec.sla_p99_ms > 0) {
    const auto& latency = phase.recorder.latency();
    verdict.p99_ms_target = spec.sla_p99_ms;
    verdict.queries_over_target = queries_over(latency, spec.sla_p99_ms);
    verdict.claimable_percentile_at_target = stats::claimable_percentile(latency.count(), *verdict.queries_over_target, 0.99);
  }
  const auto streamed = streamed_p99(phase);
  if (spec.ttft_ms > 0) verdict.ttft = SloCheck{spec.ttft_ms, streamed.ttft_ms};
  if (spec.tpot_ms > 0) verdict.tpot = SloCheck{spec.tpot_ms, streamed.tpot_ms};
  return verdict;
}

// TTFT and TPOT P99s of a search trial or ramp step, recorded only when it streamed requests.
template <typename Row>
void add_streamed_p99(const Phase& phase, Row& row) {
  if (phase.recorder.requests().empty()) return;
  const auto streamed = streamed_p99(phase);
  row.ttft_p99_ms = streamed.ttft_ms;
  row.tpot_p99_ms = streamed.tpot_ms;
}

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

// Runs `step` on every rank; when it throws on any, every rank throws after agreeing (so none waits
// in a later collective for a rank that has left).
template <typename Step>
auto on_every_rank(const RankCoordination* ranks, const std::string& what, Step step) {
  if (!ranks || !ranks->distributed()) return step();
  std::string failure;
  decltype(step()) value{};
  try {
    value = step();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!ranks->all(failure.empty())) throw Error(failure.empty() ? what + " failed on another rank" : failure);
  return value;
}

// The closed-loop capacity that sizes soak and pulse: this rank's probe, or with several ranks
// probing together, their sum (each then runs total / ranks). The measured load then starts
// together on every rank.
double probed_capacity(SystemUnderTest& system, int lanes, double seconds, const std::atomic<bool>* stop,
                       const RankCoordination* ranks) {
  const double mine = on_every_rank(ranks, "the capacity probe", [&] { return measure_capacity(system, lanes, seconds, stop); });
  if (!ranks || !ranks->distributed()) return mine;
  const double total = ranks->sum(mine);
  ranks->start_together();
  return total;
}

int rank_count(const RankCoordination* ranks) { return ranks ? std::max(1, ranks->ranks) : 1; }

// Where an interactive run's TTFT and TPOT limits came from: MLPerf's, or the user's flags.
std::string interactive_limits_source(const ScenarioSpec& spec) {
  const bool mlperf = spec.ttft_ms == kMlperfInteractiveLimits.ttft_ms && spec.tpot_ms == kMlperfInteractiveLimits.tpot_ms;
  return fmt::format("TTFT P99 <= {:g} ms, TPOT P99 <= {:g} ms: {}", spec.ttft_ms, spec.tpot_ms,
                     mlperf ? "MLPerf Inference v5.0 Interactive (Llama2-70B); its Server limits are 2000 ms and 200 ms"
                            : "--ttft-ms/--tpot-ms in place of MLPerf Interactive's 450 ms and 40 ms");
}

void run_server(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop,
                const RankCoordination*) {
  if (spec.name == Scenario::kInteractive) out.parameters["limits"] = interactive_limits_source(spec);
  if (spec.find_max_qps) {
    const double capacity = measure_capacity(system, lanes, spec.capacity_probe_s, stop);
    out.parameters["capacity_qps"] = capacity;
    auto search = find_max_qps(system, open_loop_config(spec, lanes, {{spec.duration_s, capacity}}), slo_limits(spec),
                               capacity * 1.2, 7, stop);
    MaxQpsSearchResult result{.max_qps_within_sla = search.best_qps};
    for (auto& trial : search.trials) {
      SearchTrial row{.target_qps = trial.target_qps,
                      .achieved_qps = trial.achieved_qps(),
                      .p99_ms = p99_ms(trial),
                      .passed = meets_slo(trial, slo_limits(spec)),
                      .goodput_qps = trial.goodput_qps()};
      add_streamed_p99(trial, row);
      result.trials.push_back(row);
      out.phases.push_back(std::move(trial));
    }
    // The headline is the best passing trial, or the last one tried.
    for (std::size_t i = 0; i < out.phases.size(); ++i)
      if (out.phases[i].target_qps == search.best_qps) out.headline = i;
    if (!out.headline && !out.phases.empty()) out.headline = out.phases.size() - 1;
    if (out.headline) result.goodput_qps_at_max = result.trials[*out.headline].goodput_qps;
    out.analysis.search = std::move(result);
    return;
  }
  out.phases.push_back(
      run_open_loop(system, open_loop_config(spec, lanes, {{spec.duration_s, spec.qps}}), stop, std::string(name_of(spec.name))));
  analyse_outcome(out, spec);
}

void run_ramp_pattern(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out,
                      const std::atomic<bool>* stop, const RankCoordination* ranks) {
  RampConfig ramp;
  ramp.by_rate = spec.ramp_by == RampBy::kRate;
  ramp.step = spec.ramp_step;
  ramp.start = spec.ramp_start;
  ramp.steps = spec.ramp_steps;
  ramp.step_duration_s = spec.step_duration_s;
  ramp.open_loop = open_loop_config(spec, lanes, {});
  ramp.closed_loop = closed_loop_config(spec, 1);
  ramp.until_saturation = spec.until_saturation;
  if (ranks && ranks->distributed()) {
    // One rank's saturated step would end its ramp while the others wait for the next.
    if (spec.until_saturation) throw Error("--until-saturation: not yet with several ranks (each would stop on its own)");
    // Every rank runs each step together, or none goes on; a client step is split over the ranks.
    ramp.before_step = [ranks, stop] {
      if (!ranks->all(!stopped(stop))) return false;
      ranks->start_together();
      return true;
    };
    ramp.clients_of_level = [ranks](double level) { return ramp_clients_for_rank(level, ranks->rank, ranks->ranks); };
  }
  out.phases = run_ramp(system, ramp, stop);
  analyse_outcome(out, spec);
}

}  // namespace

void analyse_outcome(ScenarioOutcome& out, const ScenarioSpec& spec) {
  if (out.phases.empty()) return;
  out.headline = 0;
  if (spec.name == Scenario::kPulse) {
    std::vector<RateSegment> schedule;
    for (const auto& s : out.parameters.value("schedule", nlohmann::json::array()))
      schedule.push_back({s.value("duration_s", 0.0), s.value("rate_qps", 0.0)});
    out.analysis.pulse = analyse_pulse(out.phases[0], schedule);
    return;
  }
  if (spec.name == Scenario::kSoak) return;
  if (spec.name != Scenario::kRamp) {
    if (has_slo(spec)) out.analysis.sla = sla_verdict(out.phases[0], spec);
    return;
  }
  const auto knee = find_knee(out.phases, slo_limits(spec));
  // The headline is the last step before the knee: the highest load the system still sustains.
  out.headline = knee.step ? (*knee.step > 0 ? *knee.step - 1 : 0) : out.phases.size() - 1;
  RampAnalysis analysis{
      .ramp_by = spec.ramp_by, .summary_step = *out.headline, .knee_step = knee.step, .knee_reason = knee.reason};
  for (const auto& p : out.phases) {
    RampStep step{.label = p.label, .throughput_qps = p.achieved_qps(), .p99_ms = p99_ms(p), .goodput_qps = p.goodput_qps()};
    add_streamed_p99(p, step);
    if (const auto why = spec.ramp_by == RampBy::kRate ? saturation_of(p) : std::nullopt; why && !analysis.saturation_step) {
      analysis.saturation_step = analysis.steps.size();
      analysis.saturation_reason = *why;
    }
    analysis.steps.push_back(step);
  }
  out.analysis.ramp = std::move(analysis);
}

namespace {

void run_soak(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop,
              const RankCoordination* ranks) {
  const double capacity = probed_capacity(system, lanes, spec.capacity_probe_s, stop, ranks);
  const double rate = spec.soak_share * capacity / rank_count(ranks);
  out.parameters["capacity_qps"] = capacity;
  out.parameters["soak_qps"] = rate;
  auto config = open_loop_config(spec, lanes, {{spec.soak_duration_s, rate}});
  config.interval_ns = static_cast<std::int64_t>(spec.soak_interval_s * 1e9);
  out.measured_from_ns = mono_now_ns();
  out.phases.push_back(run_open_loop(system, config, stop, "soak"));
  analyse_outcome(out, spec);
}

void run_pulse(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop,
               const RankCoordination* ranks) {
  const double capacity = probed_capacity(system, lanes, spec.capacity_probe_s, stop, ranks);
  const double share = capacity / rank_count(ranks);  // this rank's part of the total
  const std::vector<RateSegment> schedule{{spec.pulse_baseline_s, spec.pulse_baseline_share * share},
                                          {spec.pulse_burst_s, spec.pulse_burst_share * share},
                                          {spec.pulse_recovery_s, spec.pulse_baseline_share * share}};
  out.parameters["capacity_qps"] = capacity;
  out.parameters["schedule"] = nlohmann::json::array();
  for (const auto& s : schedule) out.parameters["schedule"].push_back({{"duration_s", s.duration_s}, {"rate_qps", s.rate_qps}});
  auto config = open_loop_config(spec, lanes, schedule);
  config.interval_ns = 500'000'000;  // half-second resolution to time the recovery
  out.measured_from_ns = mono_now_ns();
  out.phases.push_back(run_open_loop(system, config, stop, "pulse"));
  analyse_outcome(out, spec);
}

void run_closed(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop,
                const RankCoordination*) {
  const int clients = spec.name == Scenario::kSingleStream ? 1 : lanes;
  out.phases.push_back(run_closed_loop(system, closed_loop_config(spec, clients), stop, std::string(name_of(spec.name))));
  analyse_outcome(out, spec);
}

// Replays a recorded trace: the k-th request at its recorded time (scaled), carrying the library's
// k-th sample, which the libraries build to the trace's k-th lengths. Over several ranks, rank r
// sends the requests k with k mod ranks = r, each at its own time after the common start, so the
// ranks together replay the whole trace once.
void run_replay(SystemUnderTest& system, const ScenarioSpec& spec, int lanes, ScenarioOutcome& out, const std::atomic<bool>* stop,
                const RankCoordination* ranks) {
  const auto trace = load_trace(spec.trace);
  const auto summary = summarize(*trace, spec.trace.speed);
  const auto all = replay_arrivals_ns(*trace, spec.trace.speed);
  // The schedule ends just after the trace's last arrival; its rate is the trace's mean, for the record.
  const double span_s = static_cast<double>(all.back()) * 1e-9 + 1e-3;
  const int rank = ranks ? ranks->rank : 0, rank_count = ranks ? ranks->ranks : 1;
  auto config = open_loop_config(spec, lanes, {{span_s, static_cast<double>(all.size()) / rank_count / span_s}});
  for (std::size_t k = static_cast<std::size_t>(rank); k < all.size(); k += static_cast<std::size_t>(rank_count)) {
    config.recorded_arrivals_ns.push_back(all[k]);
    if (rank_count > 1) config.recorded_samples.push_back(static_cast<std::uint32_t>(k));
  }
  out.parameters["trace"] = to_json(summary);
  out.phases.push_back(run_open_loop(system, config, stop, "replay"));
  analyse_outcome(out, spec);
}

constexpr double kDrain = 30;  // open-loop drain timeout (OpenLoopConfig)

double closed_duration(const ScenarioSpec& s) { return s.max_duration_s; }
double server_duration(const ScenarioSpec& s) {
  return s.find_max_qps ? s.capacity_probe_s + 7 * (s.duration_s + kDrain) : s.duration_s + kDrain;
}
double ramp_duration(const ScenarioSpec& s) {
  return s.ramp_steps * (s.step_duration_s + (s.ramp_by == RampBy::kRate ? kDrain : 0));
}
double replay_duration(const ScenarioSpec& s) { return summarize(*load_trace(s.trace), s.trace.speed).replayed_span_s + kDrain; }
double soak_duration(const ScenarioSpec& s) { return s.capacity_probe_s + s.soak_duration_s + kDrain; }
double pulse_duration(const ScenarioSpec& s) {
  return s.capacity_probe_s + s.pulse_baseline_s + s.pulse_burst_s + s.pulse_recovery_s + kDrain;
}

int one_lane(const ScenarioSpec&, int) { return 1; }
int lanes_or_cores(const ScenarioSpec& spec, int logical_cores) {
  return spec.concurrency > 0 ? spec.concurrency : std::max(1, logical_cores);
}
int ramp_lanes(const ScenarioSpec& spec, int logical_cores) {
  if (spec.ramp_by == RampBy::kRate) return lanes_or_cores(spec, logical_cores);
  RampConfig ramp;
  ramp.step = spec.ramp_step;
  ramp.start = spec.ramp_start;
  ramp.steps = spec.ramp_steps;
  const auto levels = ramp_levels(ramp);
  return static_cast<int>(*std::max_element(levels.begin(), levels.end()));
}

constexpr NamedValue<Arrivals> kArrivals[] = {{Arrivals::kPoisson, "poisson"}, {Arrivals::kConstant, "constant"}};
constexpr NamedValue<Pacing> kPacing[] = {{Pacing::kSpin, "spin"}, {Pacing::kSleep, "sleep"}};

}  // namespace

const std::vector<ScenarioRow>& scenario_table() {
  static const std::vector<ScenarioRow> table{
      {Scenario::kSingleStream, "single-stream", "one query at a time", closed_duration, one_lane, run_closed},
      {Scenario::kConcurrency, "concurrency", "N clients in a closed loop (LLMs: N sequences batched together)", closed_duration,
       lanes_or_cores, run_closed},
      {Scenario::kOffline, "offline", "every lane busy: the most throughput", closed_duration, lanes_or_cores, run_closed},
      {Scenario::kServer, "server", "Poisson or constant arrivals at --qps (or --find-max-qps within the SLOs)", server_duration,
       lanes_or_cores, run_server},
      {Scenario::kInteractive, "interactive",
       "server arrivals under MLPerf's Interactive LLM limits (TTFT P99 450 ms, TPOT P99 40 ms unless --ttft-ms/--tpot-ms)",
       server_duration, lanes_or_cores, run_server},
      {Scenario::kRamp, "ramp", "steps of clients or arrival rate; finds the knee", ramp_duration, ramp_lanes, run_ramp_pattern},
      {Scenario::kSoak, "soak", "a long steady rate; leak and drift verdicts", soak_duration, lanes_or_cores, run_soak},
      {Scenario::kPulse, "pulse", "baseline, 200% burst, recovery; time to recover", pulse_duration, lanes_or_cores, run_pulse},
      {Scenario::kReplay, "replay", "a recorded trace's arrivals and lengths (--trace), at its times or --trace-speed",
       replay_duration, lanes_or_cores, run_replay},
  };
  return table;
}

const ScenarioRow& row_of(Scenario scenario) {
  for (const auto& row : scenario_table())
    if (row.scenario == scenario) return row;
  throw Error("internal error: scenario without a table row");
}

std::string_view name_of(Scenario scenario) { return row_of(scenario).name; }
std::string_view name_of(Arrivals arrivals) { return name_in(kArrivals, arrivals); }
std::string_view name_of(Pacing pacing) { return name_in(kPacing, pacing); }

std::string scenario_choices() {
  std::string choices;
  for (const auto& row : scenario_table()) choices += (choices.empty() ? "" : ", ") + std::string(row.name);
  return choices;
}

std::vector<std::pair<std::string, Scenario>> scenario_names() {
  std::vector<std::pair<std::string, Scenario>> names;
  for (const auto& row : scenario_table()) names.emplace_back(row.name, row.scenario);
  return names;
}

std::vector<std::pair<std::string, Arrivals>> arrivals_names() { return names_in(kArrivals); }
std::vector<std::pair<std::string, Pacing>> pacing_names() { return names_in(kPacing); }

Scenario parse_scenario(const std::string& text, const std::string& flag) {
  if (text == "generation") return Scenario::kConcurrency;  // results and studies written before every scenario ran LLMs
  for (const auto& row : scenario_table())
    if (row.name == text) return row.scenario;
  throw Error(flag + " " + text + ": unknown (expected " + scenario_choices() + ")");
}

Arrivals parse_arrivals(const std::string& text, const std::string& flag) { return parse_in(kArrivals, text, flag); }
Pacing parse_pacing(const std::string& text, const std::string& flag) { return parse_in(kPacing, text, flag); }

ServiceTargets service_targets(const ScenarioSpec& spec) {
  return {static_cast<std::int64_t>(spec.sla_p99_ms * 1e6), static_cast<std::int64_t>(spec.ttft_ms * 1e6),
          static_cast<std::int64_t>(spec.tpot_ms * 1e6)};
}

bool is_open_loop(const ScenarioSpec& spec) {
  switch (spec.name) {
    case Scenario::kServer:
    case Scenario::kInteractive:
    case Scenario::kSoak:
    case Scenario::kPulse:
    case Scenario::kReplay:
      return true;
    case Scenario::kRamp:
      return spec.ramp_by == RampBy::kRate;
    default:
      return false;
  }
}

bool holds_one_rate(Scenario scenario) { return scenario == Scenario::kServer || scenario == Scenario::kInteractive; }

void fill_scenario_defaults(ScenarioSpec& spec) {
  if (spec.name != Scenario::kInteractive) return;
  if (spec.ttft_ms == 0) spec.ttft_ms = kMlperfInteractiveLimits.ttft_ms;
  if (spec.tpot_ms == 0) spec.tpot_ms = kMlperfInteractiveLimits.tpot_ms;
}

bool has_slo(const ScenarioSpec& spec) { return spec.sla_p99_ms > 0 || spec.ttft_ms > 0 || spec.tpot_ms > 0; }

void validate(const ScenarioSpec& s) {
  require(s.concurrency >= 0, "--concurrency " + std::to_string(s.concurrency) + ": must be at least 1");
  require(s.name != Scenario::kConcurrency || s.concurrency >= 1, "--scenario concurrency needs --concurrency N (N >= 1)");
  require(s.warmup_s >= 0, "--warmup-s must not be negative");
  require(s.min_duration_s >= 0, "--min-duration must not be negative");
  require(s.max_duration_s > 0, "--max-duration must be above 0 s");
  require(s.min_duration_s <= s.max_duration_s, "--min-duration exceeds --max-duration");
  require(s.max_queries == 0 || s.max_queries >= s.min_queries, "--runs/--max-queries is below --min-queries");
  require(s.sla_p99_ms >= 0, "--p99-ms " + std::to_string(s.sla_p99_ms) + ": an SLA cannot be negative");
  require(s.ttft_ms >= 0 && s.tpot_ms >= 0, "--ttft-ms and --tpot-ms must not be negative");
  require(s.duration_s > 0, "--duration must be above 0 s");
  require(!holds_one_rate(s.name) || s.find_max_qps || s.qps > 0,
          "--scenario " + std::string(name_of(s.name)) + " needs --qps above 0 (or --find-max-qps)");
  require(s.qps >= 0, "--qps must not be negative");
  require(!s.find_max_qps || has_slo(s), "--find-max-qps needs an SLO: --p99-ms, --ttft-ms or --tpot-ms");
  require(s.max_queue >= 1, "--max-queue must be at least 1");
  require(s.ramp_step > 0 && s.ramp_steps >= 1 && s.ramp_start >= 0, "--ramp-step and --ramp-steps must be positive");
  require(s.step_duration_s > 0, "--step-duration must be above 0 s");
  require(s.capacity_probe_s > 0, "--capacity-probe must be above 0 s");
  require(s.soak_share > 0 && s.soak_duration_s > 0 && s.soak_interval_s > 0,
          "--soak-share, --soak-duration and --soak-interval must be above 0");
  require(s.pulse_baseline_share > 0 && s.pulse_burst_share > 0, "--pulse-baseline and --pulse-burst shares must be above 0");
  require(s.pulse_baseline_s > 0 && s.pulse_burst_s > 0 && s.pulse_recovery_s > 0, "pulse phase durations must be above 0 s");
  require(s.prompt_tokens >= 1 && s.output_tokens >= 1, "--prompt-tokens and --output-tokens must be at least 1");
  require(s.prompt_tokens_stddev >= 0 && s.output_tokens_stddev >= 0, "token-length standard deviations must not be negative");
  require(!s.until_saturation || (s.name == Scenario::kRamp && s.ramp_by == RampBy::kRate),
          "--until-saturation needs --scenario ramp --ramp-by rate");
  require(s.shared_prefix.groups >= 0 && (!s.shared_prefix.enabled() || s.shared_prefix.tokens >= 1),
          "--shared-prefix needs at least 1 group of at least 1 token");
  require((s.name == Scenario::kReplay) == s.trace.enabled(), "--scenario replay and --trace FILE go together");
  require(s.trace.speed > 0, "--trace-speed must be above 0");
  const auto& c = s.conversation;
  require(c.turns >= 0 && c.think_s >= 0 && c.think_stddev_s >= 0, "--turns and --think-time must not be negative");
  require(!c.enabled() || s.name == Scenario::kSingleStream || s.name == Scenario::kConcurrency || s.name == Scenario::kOffline ||
              s.name == Scenario::kServer || s.name == Scenario::kInteractive,
          "--turns: conversations run in the closed-loop scenarios (single-stream, concurrency, offline), each client a "
          "user, and in server and interactive, where --qps starts conversations; not in ramp, soak, pulse or replay");
  require(!c.enabled() || (!s.shared_prefix.enabled() && !s.trace.enabled()),
          "--turns: a conversation's history is its prompts' shared prefix (leave out --shared-prefix and --trace)");
  require(!s.trace.enabled() || !s.shared_prefix.enabled(),
          "--shared-prefix: a replayed trace brings its own prompts (Mooncake's hash_ids share prefixes)");
}

double planned_duration_s(const ScenarioSpec& s) { return row_of(s.name).planned_duration_s(s); }

int lanes_needed(const ScenarioSpec& spec, int logical_cores) { return row_of(spec.name).lanes(spec, logical_cores); }

ScenarioOutcome run_scenario(SystemUnderTest& system, const ScenarioSpec& spec, int logical_cores, const std::atomic<bool>* stop,
                             const std::function<void()>& on_measurement_start, const RankCoordination* ranks) {
  validate(spec);
  ScenarioOutcome out;
  const int lanes = std::min(lanes_needed(spec, logical_cores), system.lanes());
  out.parameters["lanes"] = lanes;
  const auto& samples = system.samples();
  out.parameters["samples"] = {
      {"count", samples.sample_count()},
      {"groups", samples.group_count()},
      {"order", spec.name == Scenario::kReplay ? "the trace's order: the k-th arrival carries the k-th request"
                : spec.conversation.enabled()  ? "conversations in library order, each client's turns in order (warm-up from "
                                                 "the library's second half)"
                                               : "drawn per query id from the seed (splitmix64 of seed + id), any concurrency"},
      {"seed", spec.seed}};
  for (std::uint32_t g = 0; g < samples.group_count(); ++g) out.group_labels.push_back(samples.group_label(g));
  const bool one_client = spec.name == Scenario::kSingleStream || spec.name == Scenario::kRamp;
  on_every_rank(ranks, "the warm-up", [&] {
    warm_up(system, one_client ? 1 : lanes, spec.warmup_queries, spec.warmup_s, spec.seed, stop, spec.conversation);
    return true;
  });
  if (ranks && ranks->distributed()) ranks->start_together();  // warmed up; the measurement starts at one instant
  if (on_measurement_start) on_measurement_start();
  out.measured_from_ns = mono_now_ns();
  LiveStats::global().reset();  // live progress figures cover the measurement, not the warm-up
  row_of(spec.name).run(system, spec, lanes, out, stop, ranks);
  out.interrupted = stop && stop->load();
  return out;
}

nlohmann::json latency_by_group_json(const QueryRecorder& recorder, const std::vector<std::string>& group_labels) {
  nlohmann::json groups = nlohmann::json::array();
  const auto& histograms = recorder.latency_by_group();
  for (std::size_t g = 0; g < histograms.size(); ++g) {
    const auto& h = histograms[g];
    nlohmann::json row{{"group", g < group_labels.size() ? group_labels[g] : std::to_string(g)}, {"queries", h.count()}};
    if (h.count()) {
      row["p50"] = ms(h.value_at_percentile(50));
      row["p90"] = ms(h.value_at_percentile(90));
      row["p99"] = ms(h.value_at_percentile(99));
      row["mean"] = h.mean() * 1e-6;
    }
    groups.push_back(row);
  }
  return groups;
}

nlohmann::json generation_phase_json(const Phase& p) {
  const auto m = summarize_requests(p.recorder.requests(), p.duration_s);
  auto summary = [](const std::optional<stats::LatencySummary>& s) {
    return s ? nlohmann::json{{"mean", s->mean},
                              {"p50", s->at(50).value},
                              {"p90", s->at(90).value},
                              {"p99", s->at(99).value},
                              {"max", s->max}}
             : nlohmann::json(nullptr);
  };
  return {{"requests", m.requests},
          {"prompt_tokens", m.prompt_tokens},
          {"output_tokens", m.output_tokens},
          {"ttft_ms", summary(m.ttft_ms)},
          {"tpot_ms", summary(m.tpot_ms)},
          {"itl_ms", summary(m.itl_ms)},
          {"e2e_ms", summary(m.e2e_ms)},
          {"output_tokens_per_s", m.output_tokens_per_s},
          {"requests_per_s", m.requests_per_s}};
}

nlohmann::json phase_json(const Phase& p, const std::vector<std::string>& group_labels) {
  const auto& h = p.recorder.latency();
  nlohmann::json j{{"label", p.label},
                   {"concurrency", p.concurrency},
                   {"issued", p.issued},
                   {"completed", p.recorder.completed()},
                   {"errors", p.recorder.errors()},
                   {"rejected", p.recorder.rejected()},
                   {"duration_s", p.duration_s},
                   {"achieved_qps", p.achieved_qps()},
                   {"minimums_met", p.minimums_met},
                   {"interrupted", p.interrupted}};
  j["target_qps"] = p.target_qps > 0 ? nlohmann::json(p.target_qps) : nlohmann::json(nullptr);
  j["latency_ms"] = h.count() ? nlohmann::json{{"p50", ms(h.value_at_percentile(50))},
                                               {"p90", ms(h.value_at_percentile(90))},
                                               {"p99", ms(h.value_at_percentile(99))},
                                               {"max", ms(h.max())},
                                               {"mean", h.mean() * 1e-6}}
                              : nlohmann::json(nullptr);
  const auto& late = p.issue_lateness;
  if (p.target_qps > 0) j["waited_for_lane"] = p.waited_for_lane;
  j["issue_lateness_us"] = late.count() ? nlohmann::json{{"p50", static_cast<double>(late.value_at_percentile(50)) * 1e-3},
                                                         {"p99", static_cast<double>(late.value_at_percentile(99)) * 1e-3},
                                                         {"max", static_cast<double>(late.max()) * 1e-3}}
                                        : nlohmann::json(nullptr);
  if (!p.recorder.latency_by_group().empty()) j["latency_by_group_ms"] = latency_by_group_json(p.recorder, group_labels);
  if (!p.recorder.requests().empty()) j["generation"] = generation_phase_json(p);
  j["good_queries"] = p.recorder.met_targets();
  j["goodput_qps"] = p.goodput_qps();
  return j;
}

}  // namespace infermark::loadgen

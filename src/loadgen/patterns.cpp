#include "loadgen/patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "loadgen/generation_metrics.hpp"
#include "stats/trend.hpp"

namespace infermark::loadgen {
namespace {

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

// An open-loop step whose completions fall below this share of its arrivals is saturated; also
// meets_slo's share of the asked rate.
constexpr double kSaturatedShare = 0.95;

double interval_p99_ms(const stats::IntervalSeries::Interval& interval) {
  return static_cast<double>(interval.latency.value_at_percentile(99)) * 1e-6;
}

// A trend verdict: significant when the slope's interval excludes zero, material when the change
// it implies over the run exceeds `material` (in the value's units).
TrendVerdict trend_verdict(const std::vector<double>& t, const std::vector<double>& y, double material, const std::string& unit) {
  if (t.size() < 3) return {TrendFinding::kNotEnoughData, t.size(), std::nullopt};
  const auto trend = stats::fit_trend(t, y);
  const double span = t.back() - t.front();
  const double change = trend.slope * span;
  const bool significant = trend.slope_ci95.low > 0 || trend.slope_ci95.high < 0;
  const bool rising = significant && trend.slope_ci95.low > 0 && change > material;
  return {
      rising        ? TrendFinding::kRising
      : significant ? TrendFinding::kSignificantButSmall
                    : TrendFinding::kFlat,
      trend.points,
      TrendFit{
          trend.slope * 60, {trend.slope_ci95.low * 60, trend.slope_ci95.high * 60}, change, material, unit, trend.r_squared}};
}

}  // namespace

double p99_ms(const Phase& phase) { return static_cast<double>(phase.recorder.latency().value_at_percentile(99)) * 1e-6; }

StreamedP99 streamed_p99(const Phase& phase) {
  if (phase.recorder.requests().empty()) return {};
  const auto metrics = summarize_requests(phase.recorder.requests(), phase.duration_s);
  return {metrics.ttft_ms ? metrics.ttft_ms->at(99).value : 0.0, metrics.tpot_ms ? metrics.tpot_ms->at(99).value : 0.0};
}

double measure_capacity(SystemUnderTest& system, int lanes, double seconds, const std::atomic<bool>* stop) {
  ClosedLoopConfig config;
  config.concurrency = lanes;
  config.max_duration_s = seconds;
  config.max_exact_samples = 0;
  const auto phase = run_closed_loop(system, config, stop, "capacity");
  if (phase.recorder.completed() == 0) throw Error("capacity probe completed no query in " + std::to_string(seconds) + " s");
  return phase.achieved_qps();
}

std::vector<double> ramp_levels(const RampConfig& config) {
  std::vector<double> levels;
  const double first = config.start > 0 ? config.start : config.by_rate ? config.step : 1;
  levels.push_back(first);
  for (int i = 1; i < config.steps; ++i)
    levels.push_back(config.start > 0 || config.by_rate ? first + config.step * i : config.step * i);
  return levels;
}

std::optional<std::string> saturation_of(const Phase& step) {
  if (step.recorder.errors() > 0) return fmt::format("{} errors", step.recorder.errors());
  if (step.recorder.rejected() > 0) return fmt::format("{} rejected (queue full)", step.recorder.rejected());
  if (step.scheduled_s <= 0 || step.issued == 0) return std::nullopt;
  // Arrivals are counted, not the nominal rate, so Poisson's spread over a short step is not
  // read as falling behind. Completions are spread over the step plus the drain after it, less
  // a typical request's latency (the tail any step has): a backlog left at the end lengthens
  // that time, and only a backlog does.
  const double arrived_qps = static_cast<double>(step.issued) / step.scheduled_s;
  const double typical_latency_s = step.recorder.completed() > 0 ? step.recorder.latency().mean() * 1e-9 : 0.0;
  const double busy_s = std::max(step.scheduled_s, step.duration_s - typical_latency_s);
  const double completed_qps = static_cast<double>(step.recorder.completed()) / busy_s;
  if (completed_qps < kSaturatedShare * arrived_qps)
    return fmt::format("{:.2f} queries/s completed of {:.2f}/s arrived (below {:.0f}%; {:.2f}/s asked)", completed_qps,
                       arrived_qps, kSaturatedShare * 100, step.target_qps);
  return std::nullopt;
}

std::vector<Phase> run_ramp(SystemUnderTest& system, const RampConfig& config, const std::atomic<bool>* stop) {
  std::vector<Phase> steps;
  for (double level : ramp_levels(config)) {
    if (config.before_step ? !config.before_step() : stopped(stop)) break;
    if (config.by_rate) {
      auto open = config.open_loop;
      open.schedule = {RateSegment{config.step_duration_s, level}};
      open.interval_ns = config.interval_ns;
      steps.push_back(run_open_loop(system, open, stop, "rate " + std::to_string(static_cast<long long>(level)) + "/s"));
      if (config.until_saturation && saturation_of(steps.back())) break;
    } else {
      auto closed = config.closed_loop;
      closed.min_queries = 1;
      closed.max_queries = 0;
      closed.concurrency = config.clients_of_level ? config.clients_of_level(level) : static_cast<int>(level);
      closed.max_duration_s = config.step_duration_s;
      closed.interval_ns = config.interval_ns;
      steps.push_back(run_closed_loop(system, closed, stop));
    }
  }
  return steps;
}

Knee find_knee(const std::vector<Phase>& steps, const SloLimits& limits, double min_gain) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double p99 = p99_ms(steps[i]);
    if (limits.p99_ms > 0 && p99 > limits.p99_ms)
      return {i, fmt::format("P99 {:.3f} ms above the {} ms SLA", p99, limits.p99_ms)};
    const auto streamed = streamed_p99(steps[i]);
    if (limits.ttft_p99_ms > 0 && streamed.ttft_ms > limits.ttft_p99_ms)
      return {i, fmt::format("P99 TTFT {:.3f} ms above the {} ms SLO", streamed.ttft_ms, limits.ttft_p99_ms)};
    if (limits.tpot_p99_ms > 0 && streamed.tpot_ms > limits.tpot_p99_ms)
      return {i, fmt::format("P99 TPOT {:.3f} ms above the {} ms SLO", streamed.tpot_ms, limits.tpot_p99_ms)};
    if (i == 0) continue;
    const double before = steps[i - 1].achieved_qps(), now = steps[i].achieved_qps();
    const double gain = before > 0 ? now / before - 1 : 1;
    if (gain < min_gain)
      return {i, fmt::format("throughput changed {:+.1f}% over the previous step (a rise below {:.0f}%)", gain * 100,
                             min_gain * 100)};
  }
  return {std::nullopt, "no knee within the steps run: throughput still rising and the P99s within the SLOs"};
}

bool meets_slo(const Phase& phase, const SloLimits& limits) {
  const auto streamed = streamed_p99(phase);
  const bool latency_ok = (limits.p99_ms <= 0 || p99_ms(phase) <= limits.p99_ms) &&
                          (limits.ttft_p99_ms <= 0 || streamed.ttft_ms <= limits.ttft_p99_ms) &&
                          (limits.tpot_p99_ms <= 0 || streamed.tpot_ms <= limits.tpot_p99_ms);
  return phase.recorder.completed() > 0 && latency_ok && phase.recorder.errors() == 0 && phase.recorder.rejected() == 0 &&
         phase.achieved_qps() >= kSaturatedShare * phase.target_qps;
}

MaxQpsSearch find_max_qps(SystemUnderTest& system, OpenLoopConfig trial, const SloLimits& limits, double upper_qps,
                          int iterations, const std::atomic<bool>* stop) {
  MaxQpsSearch search;
  double low = 0, high = upper_qps;
  const double duration = trial.schedule.front().duration_s;
  for (int i = 0; i < iterations && !stopped(stop); ++i) {
    const double rate = i == 0 ? high : (low + high) / 2;
    trial.schedule = {RateSegment{duration, rate}};
    trial.seed += 1;  // a fresh arrival sequence per trial
    search.trials.push_back(run_open_loop(system, trial, stop, "trial " + std::to_string(i + 1)));
    if (meets_slo(search.trials.back(), limits)) {
      low = rate;
      search.best_qps = std::max(search.best_qps, rate);
      if (i == 0) break;  // even the upper bound meets the SLA
    } else {
      high = rate;
    }
  }
  return search;
}

SoakAnalysis analyse_soak(const Phase& phase, const std::vector<TimedValue>& rss_mb) {
  std::vector<double> t_rss, rss, t_p99, p99;
  for (const auto& s : rss_mb) {
    t_rss.push_back(s.t_s);
    rss.push_back(s.value);
  }
  const auto& series = phase.recorder.series();
  for (std::size_t i = 0; i < series.used_intervals(); ++i) {
    const auto& interval = series.interval(i);
    if (interval.completed == 0) continue;
    t_p99.push_back(static_cast<double>(interval.start_ns) * 1e-9);
    p99.push_back(interval_p99_ms(interval));
  }
  double mean_rss = 0;
  for (double r : rss) mean_rss += r / static_cast<double>(std::max<std::size_t>(rss.size(), 1));
  double mean_p99 = 0;
  for (double p : p99) mean_p99 += p / static_cast<double>(std::max<std::size_t>(p99.size(), 1));
  // A leak is growth beyond 5% of the mean RSS (at least 10 MB); drift is P99 moving by 10%.
  // Leak, drift and the overall verdict follow from these trends (SoakAnalysis).
  SoakAnalysis result{trend_verdict(t_rss, rss, std::max(10.0, 0.05 * mean_rss), "MB"),
                      trend_verdict(t_p99, p99, 0.10 * mean_p99, "ms (per-interval P99)"), std::nullopt};
  // Streamed requests: time per output token, averaged per interval of completion.
  if (!phase.recorder.requests().empty()) {
    const double interval_s = static_cast<double>(series.interval_ns()) * 1e-9;
    const auto phase_start = phase.started_ns;
    std::vector<double> sum(series.used_intervals() + 1, 0.0), count(series.used_intervals() + 1, 0.0);
    for (const auto& r : phase.recorder.requests()) {
      if (r.token_ns.size() < 2) continue;
      const auto slot =
          std::min(sum.size() - 1, static_cast<std::size_t>(std::max<double>(
                                       0, static_cast<double>(r.token_ns.back() - phase_start) * 1e-9 / interval_s)));
      sum[slot] +=
          static_cast<double>(r.token_ns.back() - r.token_ns.front()) * 1e-6 / static_cast<double>(r.token_ns.size() - 1);
      count[slot] += 1;
    }
    std::vector<double> t_tpot, tpot;
    double mean_tpot = 0;
    for (std::size_t i = 0; i < sum.size(); ++i)
      if (count[i] > 0) {
        t_tpot.push_back(static_cast<double>(i) * interval_s);
        tpot.push_back(sum[i] / count[i]);
        mean_tpot += sum[i] / count[i];
      }
    if (!tpot.empty()) mean_tpot /= static_cast<double>(tpot.size());
    result.tpot = trend_verdict(t_tpot, tpot, 0.10 * mean_tpot, "ms (per-interval mean TPOT)");
  }
  return result;
}

PulseAnalysis analyse_pulse(const Phase& phase, const std::vector<RateSegment>& schedule) {
  if (schedule.size() != 3) throw Error("a pulse schedule is baseline, burst, baseline");
  const double burst_start = schedule[0].duration_s, burst_end = burst_start + schedule[1].duration_s;
  const auto& series = phase.recorder.series();
  const double interval_s = static_cast<double>(series.interval_ns()) * 1e-9;
  auto baseline = series.interval(0).latency;  // same precision as the intervals it merges
  baseline.reset();
  double peak_p99 = 0, recovered_at = -1;
  std::uint64_t burst_rejections = 0, burst_errors = 0;
  for (std::size_t i = 0; i < series.used_intervals(); ++i) {
    const auto& interval = series.interval(i);
    const double t = static_cast<double>(interval.start_ns) * 1e-9;
    if (t + interval_s <= burst_start) baseline.merge(interval.latency);
    if (t >= burst_start) peak_p99 = std::max(peak_p99, interval.completed ? interval_p99_ms(interval) : 0.0);
    if (t >= burst_start && t < burst_end) burst_errors += interval.errors;
  }
  burst_rejections = burst_errors;  // rejections are recorded as interval errors
  const double baseline_p99 = static_cast<double>(baseline.value_at_percentile(99)) * 1e-6;
  // Recovered: the first interval after the burst from which every later interval's P99 stays
  // within 1.5x the baseline P99.
  const double limit = 1.5 * baseline_p99;
  for (std::size_t i = series.used_intervals(); i-- > 0;) {
    const auto& interval = series.interval(i);
    const double t = static_cast<double>(interval.start_ns) * 1e-9;
    if (t < burst_end) break;
    if (interval.completed && interval_p99_ms(interval) > limit) break;
    recovered_at = t;
  }
  PulseAnalysis result{baseline_p99, peak_p99, burst_rejections, limit, burst_start, burst_end, std::nullopt};
  if (recovered_at >= 0) result.time_to_recover_s = std::max(0.0, recovered_at - burst_end);
  return result;
}

}  // namespace infermark::loadgen

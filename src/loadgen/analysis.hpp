// What a scenario concluded from its phases (SLA verdict, highest rate within the SLOs, ramp knee,
// pulse recovery, soak trends), as typed records with the JSON layout of a result's "analysis"
// (docs/result-schema.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/latency_summary.hpp"

namespace infermark::loadgen {

// Every member of these records has a default, so designated initializers name only what they set.
// What follows from other fields (knee label, recovered, leak, drift, soak verdict) is computed, not
// stored, so it cannot disagree with them.

// Here rather than in scenario.hpp because the ramp analysis records it, and so are its names
// (a result's analysis reads without the scenarios).
enum class RampBy { kConcurrency, kRate };
std::string_view name_of(RampBy ramp_by);
// Throws infermark::Error naming `flag`, the text and the choices.
RampBy parse_ramp_by(const std::string& text, const std::string& flag = "--ramp-by");
// Name and value of every member, for flag parsers (CLI11's CheckedTransformer).
std::vector<std::pair<std::string, RampBy>> ramp_by_names();

// --- SLA verdict -------------------------------------------------------------------------------
// A per-request SLO on streamed tokens (TTFT or TPOT): its P99 target and the P99 measured.
struct SloCheck {
  double p99_ms_target = 0, p99_ms = 0;
};

struct SlaVerdict {
  std::optional<double> p99_ms_target{};  // none when only token SLOs were set
  double p99_ms = 0;
  bool passed = false;
  std::uint64_t queries_needed_for_p99_claim = 0;
  std::uint64_t errors = 0, rejected = 0;
  std::optional<double> goodput_qps{};  // absent in files written before goodput was counted
  std::uint64_t good_queries = 0;
  // With an end-to-end target only: queries above it, and the percentile the run supports at 99%
  // confidence (MLPerf-style early stopping).
  std::optional<std::uint64_t> queries_over_target{};
  std::optional<double> claimable_percentile_at_target{};
  std::optional<SloCheck> ttft{}, tpot{};
};

// --- highest rate within the SLOs (server --find-max-qps) --------------------------------------
struct SearchTrial {
  double target_qps = 0, achieved_qps = 0, p99_ms = 0;
  bool passed = false;
  double goodput_qps = 0;
  std::optional<double> ttft_p99_ms{}, tpot_p99_ms{};  // streamed requests only
};

// Not MaxQpsSearch (patterns.hpp), which holds the trials' phases: this is what the result keeps.
struct MaxQpsSearchResult {
  double max_qps_within_sla = 0;  // 0 when no trial met the SLOs
  std::vector<SearchTrial> trials{};
  std::optional<double> goodput_qps_at_max{};  // of the headline trial; none when no trial ran
};

// --- ramp --------------------------------------------------------------------------------------
struct RampStep {
  std::string label{};
  double throughput_qps = 0, p99_ms = 0;
  std::optional<double> ttft_p99_ms{}, tpot_p99_ms{};  // streamed requests only
  std::optional<double> goodput_qps{};                 // queries/s that met every target; absent in older files
};

struct RampAnalysis {
  RampBy ramp_by = RampBy::kConcurrency;
  std::size_t summary_step = 0;  // the step the cell's headline figures come from
  std::vector<RampStep> steps{};
  std::optional<std::size_t> knee_step{};  // index into steps; none when no step qualified
  std::string knee_reason{};               // the rule that fired, or why no step did
  // Rate ramps: the first step that did not keep up (saturation_of in patterns.hpp: errors,
  // rejections, completions below 95% of the arrivals) and why; none when every step kept up.
  std::optional<std::size_t> saturation_step{};
  std::string saturation_reason{};
  // The knee step's label (what the result writes as "knee_label"); none without a knee.
  std::optional<std::string> knee_label() const;
};

// --- pulse -------------------------------------------------------------------------------------
struct PulseAnalysis {
  double baseline_p99_ms = 0, peak_p99_ms = 0;
  std::uint64_t burst_errors_and_rejections = 0;
  double recovery_limit_p99_ms = 0;
  double burst_start_s = 0, burst_end_s = 0;
  std::optional<double> time_to_recover_s{};  // none: P99 never came back within the limit
  bool recovered() const { return time_to_recover_s.has_value(); }
};

// --- soak --------------------------------------------------------------------------------------
enum class TrendFinding { kNotEnoughData, kFlat, kSignificantButSmall, kRising };
std::string_view name_of(TrendFinding finding);

// A least-squares trend, per minute, and the change it implies over the run.
struct TrendFit {
  double slope_per_min = 0;
  stats::Interval slope_per_min_ci95{};
  double change_over_run = 0;
  double material_threshold = 0;  // a change beyond this (in `unit`) is material
  std::string unit{};
  double r_squared = 0;
};

struct TrendVerdict {
  TrendFinding verdict = TrendFinding::kNotEnoughData;
  std::size_t points = 0;
  std::optional<TrendFit> fit{};  // none with fewer than 3 points
  bool rising() const { return verdict == TrendFinding::kRising; }
};

struct SoakAnalysis {
  TrendVerdict memory{};               // RSS, MB
  TrendVerdict latency{};              // per-interval P99, ms
  std::optional<TrendVerdict> tpot{};  // per-interval mean TPOT, ms (streamed requests only)
  bool leak_suspected() const { return memory.rising(); }
  bool latency_drift() const { return latency.rising() || (tpot && tpot->rising()); }
  std::string verdict() const;  // "stable", "memory grows", "latency drifts up", or both
};

// --- everything a scenario concluded -------------------------------------------------------------
struct Analysis {
  std::optional<SlaVerdict> sla{};
  std::optional<MaxQpsSearchResult> search{};
  std::optional<RampAnalysis> ramp{};
  std::optional<PulseAnalysis> pulse{};
  std::optional<SoakAnalysis> soak{};
};

// The result's "analysis" object: "sla", "pulse" and "soak" are nested objects; the search and the
// ramp write their keys at the top level ("max_qps_within_sla", "search", "knee_step", ...).
// Nothing present writes {}.
nlohmann::json to_json(const Analysis& analysis);
// Never throws: a missing part stays empty, and so does a malformed one, so one bad verdict does
// not make a whole result file unreadable.
Analysis analysis_from(const nlohmann::json& json);

}  // namespace infermark::loadgen

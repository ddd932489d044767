#include "loadgen/analysis.hpp"

#include <exception>

#include "core/json_fields.hpp"
#include "core/named_enum.hpp"
#include "loadgen/scenario.hpp"

namespace infermark::loadgen {
namespace {

constexpr NamedValue<RampBy> kRampBy[] = {{RampBy::kConcurrency, "concurrency"}, {RampBy::kRate, "rate"}};

using nlohmann::json;

constexpr NamedValue<TrendFinding> kTrendFindings[] = {{TrendFinding::kNotEnoughData, "not enough data"},
                                                       {TrendFinding::kFlat, "flat"},
                                                       {TrendFinding::kSignificantButSmall, "significant but small"},
                                                       {TrendFinding::kRising, "rising"}};

const json& array_at(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const auto* value = json_field(j, key);
  return value && value->is_array() ? *value : kEmpty;
}

json number_or_null(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// --- SLA verdict -------------------------------------------------------------------------------

json slo_check_json(const SloCheck& check) { return {{"p99_ms_target", check.p99_ms_target}, {"p99_ms", check.p99_ms}}; }

SloCheck slo_check_from(const json& j) { return {number(j, "p99_ms_target"), number(j, "p99_ms")}; }

json sla_json(const SlaVerdict& sla) {
  json j{{"p99_ms_target", number_or_null(sla.p99_ms_target)},
         {"p99_ms", sla.p99_ms},
         {"passed", sla.passed},
         {"queries_needed_for_p99_claim", sla.queries_needed_for_p99_claim},
         {"errors", sla.errors},
         {"rejected", sla.rejected},
         {"good_queries", sla.good_queries}};
  if (sla.goodput_qps) j["goodput_qps"] = *sla.goodput_qps;
  if (sla.queries_over_target) j["queries_over_target"] = *sla.queries_over_target;
  if (sla.claimable_percentile_at_target) j["claimable_percentile_at_target"] = *sla.claimable_percentile_at_target;
  if (sla.ttft) j["ttft"] = slo_check_json(*sla.ttft);
  if (sla.tpot) j["tpot"] = slo_check_json(*sla.tpot);
  return j;
}

SlaVerdict sla_from(const json& j) {
  SlaVerdict sla;
  sla.p99_ms_target = optional_number(j, "p99_ms_target");
  sla.p99_ms = number(j, "p99_ms");
  sla.passed = flag(j, "passed");
  sla.queries_needed_for_p99_claim = count(j, "queries_needed_for_p99_claim");
  sla.errors = count(j, "errors");
  sla.rejected = count(j, "rejected");
  sla.goodput_qps = optional_number(j, "goodput_qps");
  sla.good_queries = count(j, "good_queries");
  sla.queries_over_target = optional_count(j, "queries_over_target");
  sla.claimable_percentile_at_target = optional_number(j, "claimable_percentile_at_target");
  if (const auto* ttft = json_field(j, "ttft"); ttft && ttft->is_object()) sla.ttft = slo_check_from(*ttft);
  if (const auto* tpot = json_field(j, "tpot"); tpot && tpot->is_object()) sla.tpot = slo_check_from(*tpot);
  return sla;
}

// --- highest rate within the SLOs ----------------------------------------------------------------

// TTFT and TPOT P99s of a trial or ramp step, written only for streamed requests.
void add_streamed(json& j, const std::optional<double>& ttft_p99_ms, const std::optional<double>& tpot_p99_ms) {
  if (ttft_p99_ms) j["ttft_p99_ms"] = *ttft_p99_ms;
  if (tpot_p99_ms) j["tpot_p99_ms"] = *tpot_p99_ms;
}

json trial_json(const SearchTrial& trial) {
  json j{{"target_qps", trial.target_qps},
         {"achieved_qps", trial.achieved_qps},
         {"p99_ms", trial.p99_ms},
         {"passed", trial.passed},
         {"goodput_qps", trial.goodput_qps}};
  add_streamed(j, trial.ttft_p99_ms, trial.tpot_p99_ms);
  return j;
}

SearchTrial trial_from(const json& j) {
  return {number(j, "target_qps"),
          number(j, "achieved_qps"),
          number(j, "p99_ms"),
          flag(j, "passed"),
          number(j, "goodput_qps"),
          optional_number(j, "ttft_p99_ms"),
          optional_number(j, "tpot_p99_ms")};
}

void add_search(json& j, const MaxQpsSearchResult& search) {
  j["max_qps_within_sla"] = search.max_qps_within_sla;
  j["search"] = json::array();
  for (const auto& trial : search.trials) j["search"].push_back(trial_json(trial));
  if (search.goodput_qps_at_max) j["goodput_qps_at_max"] = *search.goodput_qps_at_max;
}

MaxQpsSearchResult search_from(const json& j) {
  MaxQpsSearchResult search;
  search.max_qps_within_sla = number(j, "max_qps_within_sla");
  for (const auto& trial : array_at(j, "search")) search.trials.push_back(trial_from(trial));
  search.goodput_qps_at_max = optional_number(j, "goodput_qps_at_max");
  return search;
}

// --- ramp --------------------------------------------------------------------------------------

json step_json(const RampStep& step) {
  json j{{"label", step.label}, {"throughput_qps", step.throughput_qps}, {"p99_ms", step.p99_ms}};
  add_streamed(j, step.ttft_p99_ms, step.tpot_p99_ms);
  if (step.goodput_qps) j["goodput_qps"] = *step.goodput_qps;
  return j;
}

RampStep step_from(const json& j) {
  return {text(j, "label"),
          number(j, "throughput_qps"),
          number(j, "p99_ms"),
          optional_number(j, "ttft_p99_ms"),
          optional_number(j, "tpot_p99_ms"),
          optional_number(j, "goodput_qps")};
}

void add_ramp(json& j, const RampAnalysis& ramp) {
  j["summary_step"] = ramp.summary_step;
  j["ramp_by"] = name_of(ramp.ramp_by);
  j["steps"] = json::array();
  for (const auto& step : ramp.steps) j["steps"].push_back(step_json(step));
  j["knee_step"] = ramp.knee_step ? json(*ramp.knee_step) : json(nullptr);
  const auto label = ramp.knee_label();
  j["knee_label"] = label ? json(*label) : json(nullptr);
  j["knee_reason"] = ramp.knee_reason;
  if (ramp.saturation_step) {
    j["saturation_step"] = *ramp.saturation_step;
    j["saturation_label"] = ramp.steps[*ramp.saturation_step].label;
    j["saturation_reason"] = ramp.saturation_reason;
  }
}

RampAnalysis ramp_from(const json& j) {
  RampAnalysis ramp;
  if (const auto by = text(j, "ramp_by"); !by.empty()) ramp.ramp_by = parse_ramp_by(by, "analysis.ramp_by");
  ramp.summary_step = count(j, "summary_step");
  for (const auto& step : array_at(j, "steps")) ramp.steps.push_back(step_from(step));
  // A knee outside the steps would name no step: read it as no knee.
  if (const auto knee = optional_count(j, "knee_step"); knee && *knee < ramp.steps.size()) ramp.knee_step = *knee;
  ramp.knee_reason = text(j, "knee_reason");
  if (const auto saturated = optional_count(j, "saturation_step"); saturated && *saturated < ramp.steps.size()) {
    ramp.saturation_step = *saturated;
    ramp.saturation_reason = text(j, "saturation_reason");
  }
  return ramp;
}

// --- pulse -------------------------------------------------------------------------------------

json pulse_json(const PulseAnalysis& pulse) {
  return {{"baseline_p99_ms", pulse.baseline_p99_ms},
          {"peak_p99_ms", pulse.peak_p99_ms},
          {"burst_errors_and_rejections", pulse.burst_errors_and_rejections},
          {"recovery_limit_p99_ms", pulse.recovery_limit_p99_ms},
          {"burst_start_s", pulse.burst_start_s},
          {"burst_end_s", pulse.burst_end_s},
          {"time_to_recover_s", number_or_null(pulse.time_to_recover_s)},
          {"recovered", pulse.recovered()}};
}

PulseAnalysis pulse_from(const json& j) {
  return {number(j, "baseline_p99_ms"),           number(j, "peak_p99_ms"),   count(j, "burst_errors_and_rejections"),
          number(j, "recovery_limit_p99_ms"),     number(j, "burst_start_s"), number(j, "burst_end_s"),
          optional_number(j, "time_to_recover_s")};
}

// --- soak --------------------------------------------------------------------------------------

json trend_json(const TrendVerdict& trend) {
  json j{{"verdict", name_of(trend.verdict)}, {"points", trend.points}};
  if (const auto& fit = trend.fit) {
    j["slope_per_min"] = fit->slope_per_min;
    j["slope_per_min_ci95"] = {fit->slope_per_min_ci95.low, fit->slope_per_min_ci95.high};
    j["change_over_run"] = fit->change_over_run;
    j["material_threshold"] = fit->material_threshold;
    j["unit"] = fit->unit;
    j["r_squared"] = fit->r_squared;
  }
  return j;
}

TrendVerdict trend_from(const json& j) {
  TrendVerdict trend;
  trend.verdict = parse_in(kTrendFindings, text(j, "verdict"), "analysis.soak trend verdict");
  trend.points = count(j, "points");
  if (json_field(j, "slope_per_min")) {
    const auto& ci95 = array_at(j, "slope_per_min_ci95");
    const auto bound = [&](std::size_t i) { return ci95.size() == 2 && ci95[i].is_number() ? ci95[i].get<double>() : 0.0; };
    trend.fit = TrendFit{number(j, "slope_per_min"),      {bound(0), bound(1)}, number(j, "change_over_run"),
                         number(j, "material_threshold"), text(j, "unit"),      number(j, "r_squared")};
  }
  return trend;
}

json soak_json(const SoakAnalysis& soak) {
  json j{{"memory", trend_json(soak.memory)},
         {"latency", trend_json(soak.latency)},
         {"leak_suspected", soak.leak_suspected()},
         {"latency_drift", soak.latency_drift()},
         {"verdict", soak.verdict()}};
  if (soak.tpot) j["tpot"] = trend_json(*soak.tpot);
  return j;
}

SoakAnalysis soak_from(const json& j) {
  SoakAnalysis soak{trend_from(j.at("memory")), trend_from(j.at("latency")), std::nullopt};
  if (const auto* tpot = json_field(j, "tpot"); tpot && tpot->is_object()) soak.tpot = trend_from(*tpot);
  return soak;
}

// One part of the analysis, or none when it is absent or cannot be read.
template <typename Part, typename Read>
std::optional<Part> part_from(bool present, const Read& read) {
  if (!present) return std::nullopt;
  try {
    return read();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_object_at(const json& j, const char* key) {
  const auto* value = json_field(j, key);
  return value && value->is_object();
}

}  // namespace

std::string_view name_of(RampBy ramp_by) { return name_in(kRampBy, ramp_by); }
RampBy parse_ramp_by(const std::string& text, const std::string& flag) { return parse_in(kRampBy, text, flag); }
std::vector<std::pair<std::string, RampBy>> ramp_by_names() { return names_in(kRampBy); }

std::string_view name_of(TrendFinding finding) { return name_in(kTrendFindings, finding); }

std::optional<std::string> RampAnalysis::knee_label() const {
  if (!knee_step || *knee_step >= steps.size()) return std::nullopt;
  return steps[*knee_step].label;
}

std::string SoakAnalysis::verdict() const {
  const bool leak = leak_suspected(), drift = latency_drift();
  if (!leak && !drift) return "stable";
  return std::string(leak ? "memory grows" : "") + (leak && drift ? "; " : "") + (drift ? "latency drifts up" : "");
}

json to_json(const Analysis& analysis) {
  json j = json::object();
  if (analysis.sla) j["sla"] = sla_json(*analysis.sla);
  if (analysis.search) add_search(j, *analysis.search);
  if (analysis.ramp) add_ramp(j, *analysis.ramp);
  if (analysis.pulse) j["pulse"] = pulse_json(*analysis.pulse);
  if (analysis.soak) j["soak"] = soak_json(*analysis.soak);
  return j;
}

Analysis analysis_from(const json& j) {
  Analysis analysis;
  if (!j.is_object()) return analysis;
  analysis.sla = part_from<SlaVerdict>(is_object_at(j, "sla"), [&] { return sla_from(j["sla"]); });
  analysis.search =
      part_from<MaxQpsSearchResult>(j.contains("max_qps_within_sla") || j.contains("search"), [&] { return search_from(j); });
  analysis.ramp = part_from<RampAnalysis>(j.contains("knee_reason") || j.contains("steps"), [&] { return ramp_from(j); });
  analysis.pulse = part_from<PulseAnalysis>(is_object_at(j, "pulse"), [&] { return pulse_from(j["pulse"]); });
  analysis.soak = part_from<SoakAnalysis>(is_object_at(j, "soak"), [&] { return soak_from(j["soak"]); });
  return analysis;
}

}  // namespace infermark::loadgen

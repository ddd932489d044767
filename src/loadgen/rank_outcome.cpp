#include "loadgen/rank_outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"

namespace infermark::loadgen {
namespace {

using nlohmann::json;

// Reads with `read`, turning the JSON library's and the histograms' exceptions into one Error.
template <typename Read>
auto reading(const std::string& what, Read read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw Error(what + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw Error(what + ": " + e.what());
  }
}

// The merged phase's label for the whole (a ramp step's rate or clients are the ranks' sum).
void relabel_for_total(Phase& phase, const ScenarioSpec& total) {
  if (total.name != Scenario::kRamp) return;
  phase.label = total.ramp_by == RampBy::kRate ? "rate " + std::to_string(static_cast<long long>(phase.target_qps + 0.5)) + "/s"
                                               : "concurrency " + std::to_string(phase.concurrency);
}

// Parameters of the whole: lanes and rates add; what every rank shares (capacity) stays.
void sum_parameters(json& into, const json& other) {
  if (into.contains("lanes") && other.contains("lanes")) into["lanes"] = into["lanes"].get<int>() + other["lanes"].get<int>();
  if (into.contains("soak_qps") && other.contains("soak_qps"))
    into["soak_qps"] = into["soak_qps"].get<double>() + other["soak_qps"].get<double>();
  if (into.contains("schedule") && other.contains("schedule") && into["schedule"].size() == other["schedule"].size())
    for (std::size_t i = 0; i < into["schedule"].size(); ++i)
      into["schedule"][i]["rate_qps"] =
          into["schedule"][i]["rate_qps"].get<double>() + other["schedule"][i]["rate_qps"].get<double>();
}

double lateness_ms(const stats::LatencyHistogram& h, double p) { return static_cast<double>(h.value_at_percentile(p)) * 1e-6; }

}  // namespace

json to_json(const Phase& p) {
  return {{"label", p.label},
          {"concurrency", p.concurrency},
          {"target_qps", p.target_qps},
          {"issued", p.issued},
          {"duration_s", p.duration_s},
          {"started_ns", p.started_ns},
          {"interrupted", p.interrupted},
          {"minimums_met", p.minimums_met},
          {"recorder", p.recorder.to_json()},
          {"issue_lateness", p.issue_lateness.to_json()},
          {"waited_for_lane", p.waited_for_lane}};
}

Phase phase_from_json(const json& j) {
  return reading("phase", [&] {
    Phase p(RecorderLimits{});
    p.label = j.at("label").get<std::string>();
    p.concurrency = j.at("concurrency").get<int>();
    p.target_qps = j.at("target_qps").get<double>();
    p.issued = j.at("issued").get<std::uint64_t>();
    p.duration_s = j.at("duration_s").get<double>();
    p.started_ns = j.at("started_ns").get<std::int64_t>();
    p.interrupted = j.at("interrupted").get<bool>();
    p.minimums_met = j.at("minimums_met").get<bool>();
    p.recorder = QueryRecorder::from_json(j.at("recorder"));
    p.issue_lateness = stats::LatencyHistogram::from_json(j.at("issue_lateness"));
    p.waited_for_lane = j.at("waited_for_lane").get<std::uint64_t>();
    return p;
  });
}

json to_json(const ScenarioOutcome& o) {
  json phases = json::array();
  for (const auto& p : o.phases) phases.push_back(to_json(p));
  return {{"phases", phases},
          {"headline", o.headline ? json(*o.headline) : json(nullptr)},
          {"parameters", o.parameters},
          {"analysis", to_json(o.analysis)},
          {"group_labels", o.group_labels},
          {"measured_from_ns", o.measured_from_ns},
          {"interrupted", o.interrupted}};
}

ScenarioOutcome outcome_from_json(const json& j) {
  return reading("scenario outcome", [&] {
    ScenarioOutcome o;
    for (const auto& p : j.at("phases")) o.phases.push_back(phase_from_json(p));
    if (!j.at("headline").is_null()) o.headline = j.at("headline").get<std::size_t>();
    o.parameters = j.at("parameters");
    o.analysis = analysis_from(j.at("analysis"));
    o.group_labels = j.at("group_labels").get<std::vector<std::string>>();
    o.measured_from_ns = j.at("measured_from_ns").get<std::int64_t>();
    o.interrupted = j.at("interrupted").get<bool>();
    return o;
  });
}

void merge_phase(Phase& into, const Phase& other) {
  into.concurrency += other.concurrency;
  into.target_qps += other.target_qps;
  into.issued += other.issued;
  into.duration_s = std::max(into.duration_s, other.duration_s);
  into.interrupted = into.interrupted || other.interrupted;
  into.minimums_met = into.minimums_met && other.minimums_met;
  into.recorder.merge(other.recorder);
  into.issue_lateness.merge(other.issue_lateness);
  into.waited_for_lane += other.waited_for_lane;
}

ScenarioOutcome merge_rank_outcomes(const std::vector<ScenarioOutcome>& outcomes, const ScenarioSpec& total) {
  if (outcomes.empty()) throw Error("no rank's outcome to merge");
  ScenarioOutcome merged;
  const auto& first = outcomes.front();
  merged.parameters = first.parameters;
  merged.group_labels = first.group_labels;
  merged.measured_from_ns = first.measured_from_ns;
  std::size_t phases = first.phases.size();
  for (const auto& o : outcomes) phases = std::min(phases, o.phases.size());
  for (std::size_t i = 0; i < phases; ++i) {
    merged.phases.push_back(first.phases[i]);
    std::size_t samples = 0;
    for (const auto& o : outcomes) samples += o.phases[i].recorder.exact_samples();
    merged.phases.back().recorder.reserve_samples(samples);  // every rank's samples, so exact percentiles stay exact
    for (std::size_t r = 1; r < outcomes.size(); ++r) merge_phase(merged.phases.back(), outcomes[r].phases[i]);
    relabel_for_total(merged.phases.back(), total);
  }
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    merged.interrupted = merged.interrupted || outcomes[r].interrupted;
    if (r > 0) sum_parameters(merged.parameters, outcomes[r].parameters);
  }
  analyse_outcome(merged, total);
  return merged;
}

json to_json(const RankOutcome& r) {
  return {{"rank", r.rank},
          {"host", r.host},
          {"share_qps", r.share_qps},
          {"share_clients", r.share_clients},
          {"outcome", r.outcome ? to_json(*r.outcome) : json(nullptr)},
          {"error", r.error},
          {"client", r.client}};
}

RankOutcome rank_outcome_from_json(const json& j) {
  return reading("a rank's outcome", [&] {
    RankOutcome r;
    r.rank = j.at("rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.share_qps = j.at("share_qps").get<double>();
    r.share_clients = j.at("share_clients").get<int>();
    if (!j.at("outcome").is_null()) r.outcome = outcome_from_json(j.at("outcome"));
    r.error = j.at("error").get<std::string>();
    r.client = j.at("client");
    return r;
  });
}

ScaleoutSummary summarize_ranks(const std::vector<RankOutcome>& ranks, const ScenarioSpec& total) {
  ScaleoutSummary summary;
  json rows = json::array();
  const bool open_loop = is_open_loop(total);
  for (const auto& r : ranks) {
    json row{{"rank", r.rank}, {"host", r.host}};
    row["share"] = open_loop ? json{{"qps", r.share_qps}} : json{{"clients", r.share_clients}};
    std::vector<std::string> behind;
    std::string failure = r.error;
    std::uint64_t completed = 0, errors = 0, rejected = 0;
    double duration_s = 0;
    stats::LatencyHistogram lateness;
    if (r.outcome) {
      for (const auto& p : r.outcome->phases) {
        completed += p.recorder.completed();
        errors += p.recorder.errors();
        rejected += p.recorder.rejected();
        duration_s += p.duration_s;
        lateness.merge(p.issue_lateness);
      }
      if (completed == 0 && errors > 0 && failure.empty())
        failure = "every request failed (" + std::to_string(errors) + " errors)";
      // A server run holds one rate the client must keep up with: arrivals held back by its own
      // in-flight limit mean this rank, not the server, set the pace. (A soak's rate is a share of
      // the capacity of those very lanes, so there they are busy by design.)
      const auto& outcome = *r.outcome;
      if (holds_one_rate(total.name) && outcome.headline) {
        const auto& headline = outcome.phases[*outcome.headline];
        row["target_qps"] = headline.target_qps;
        row["waited_for_lane"] = headline.waited_for_lane;
        const double waited =
            headline.issued ? static_cast<double>(headline.waited_for_lane) / static_cast<double>(headline.issued) : 0.0;
        if (waited > kBehindWaitedShare)
          behind.push_back(fmt::format("{:.0f}% of its arrivals waited for a free in-flight slot ({} in flight at most)",
                                       waited * 100, headline.concurrency));
      }
    }
    // A pulse's burst and a ramp's last steps are meant to overflow; a steady rate is not.
    const bool steady = holds_one_rate(total.name) || total.name == Scenario::kSoak;
    if (steady && rejected > 0) behind.push_back(fmt::format("its queue rejected {} arrivals", rejected));
    if (lateness.count() && lateness_ms(lateness, 99) > kBehindLatenessP99Ms)
      behind.push_back(
          fmt::format("issued arrivals {:.1f} ms late at P99 (bound {} ms)", lateness_ms(lateness, 99), kBehindLatenessP99Ms));
    row["completed"] = completed;
    row["errors"] = errors;
    row["rejected"] = rejected;
    row["achieved_qps"] = duration_s > 0 ? static_cast<double>(completed) / duration_s : 0.0;
    row["issue_lateness_us"] = lateness.count() ? json{{"p50", lateness_ms(lateness, 50) * 1e3},
                                                       {"p99", lateness_ms(lateness, 99) * 1e3},
                                                       {"max", static_cast<double>(lateness.max()) * 1e-3}}
                                                : json(nullptr);
    row["failed"] = !failure.empty();
    row["fell_behind"] = !behind.empty();
    if (!failure.empty()) row["error"] = failure;
    if (!behind.empty()) row["behind_because"] = behind;
    if (r.outcome && r.outcome->parameters.contains("samples"))
      row["seed"] = r.outcome->parameters["samples"].value("seed", json());
    if (!failure.empty() || !behind.empty()) {
      summary.valid = false;
      std::string why = failure;
      for (const auto& b : behind) why += (why.empty() ? "" : "; ") + b;
      summary.problems +=
          (summary.problems.empty() ? "" : "; ") +
          fmt::format("rank {} ({}) {}", r.rank, r.host, failure.empty() ? "fell behind: " + why : "failed: " + why);
    }
    rows.push_back(row);
  }
  summary.section = {{"ranks", ranks.size()},
                     {"valid", summary.valid},
                     {"fell_behind_rule",
                      fmt::format("open loop: issue lateness P99 above {} ms; server and soak also: its queue rejected "
                                  "arrivals; server also: more than {:.0f}% of its arrivals waited for a free in-flight slot "
                                  "(--concurrency)",
                                  kBehindLatenessP99Ms, kBehindWaitedShare * 100)},
                     {"merge",
                      "histograms, time series, exact samples and streamed requests merged exactly on rank 0; "
                      "the analysis concluded again from the merged phases"},
                     {"per_rank", rows}};
  if (!summary.valid) summary.section["problems"] = summary.problems;
  return summary;
}

}  // namespace infermark::loadgen

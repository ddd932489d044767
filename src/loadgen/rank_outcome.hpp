// A distributed run's parts on their way to rank 0 and back together: each rank's outcome as JSON
// (phases with their recorders' histograms, time series, exact samples, streamed requests and
// counts), the exact phase-by-phase merge, and the per-rank figures with the rule that says
// whether a rank fell behind (the result's "scaleout" section, docs/result-schema.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loadgen/scenario.hpp"

namespace infermark::loadgen {

nlohmann::json to_json(const Phase& phase);
Phase phase_from_json(const nlohmann::json& j);  // throws infermark::Error
nlohmann::json to_json(const ScenarioOutcome& outcome);
ScenarioOutcome outcome_from_json(const nlohmann::json& j);  // throws infermark::Error

// Folds a rank's phase into another's: counts and histograms add, rates and clients add, the
// duration is the longer one.
void merge_phase(Phase& into, const Phase& other);

// One outcome from the ranks' outcomes (rank order), phase by phase, with the parameters of the
// whole (lanes, soak rate, pulse schedule summed) and the analysis concluded again from the merged
// phases for `total`, the scenario as the user asked for it. Ranks that ran fewer phases (stopped
// early) bound the phases kept.
ScenarioOutcome merge_rank_outcomes(const std::vector<ScenarioOutcome>& outcomes, const ScenarioSpec& total);

// One rank's part as it travels to rank 0: its outcome, or why it has none.
struct RankOutcome {
  int rank = 0;
  std::string host;
  double share_qps = 0;   // open loop: its arrival rate (0: sized by the capacity probe, or closed loop)
  int share_clients = 0;  // closed loop: its clients
  std::optional<ScenarioOutcome> outcome;
  std::string error;                                 // why it failed ("" when it ran)
  nlohmann::json client = nlohmann::json::object();  // the client's own counters, summed on rank 0
};
nlohmann::json to_json(const RankOutcome& rank);
RankOutcome rank_outcome_from_json(const nlohmann::json& j);  // throws infermark::Error

// An open-loop rank whose scheduler issued arrivals later than this at P99 fell behind.
constexpr double kBehindLatenessP99Ms = 100.0;
// A server rank more than this share of whose arrivals waited for a free in-flight slot fell
// behind: its own limit, not the server, set the pace. (Not "achieved below 95% of the rate": in a
// short run one slow last request stretches the duration as much as a client that cannot keep up.)
constexpr double kBehindWaitedShare = 0.10;

// The "scaleout" section and its verdict: valid unless a rank failed (threw, or every request
// failed) or fell behind; `problems` names each such rank and why.
struct ScaleoutSummary {
  nlohmann::json section;
  bool valid = true;
  std::string problems;
};
ScaleoutSummary summarize_ranks(const std::vector<RankOutcome>& ranks, const ScenarioSpec& total);

}  // namespace infermark::loadgen

#include "report/evaluation_report.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/error.hpp"

namespace infermark::report {

std::string outcome_text(ExperimentOutcome outcome) {
  switch (outcome) {
    case ExperimentOutcome::kMeasured:
      return "measured";
    case ExperimentOutcome::kCellsFailed:
      return "some cells failed";
    case ExperimentOutcome::kFailedToRun:
      return "could not run";
    case ExperimentOutcome::kSkipped:
      return "skipped";
  }
  return "unknown";
}

EvaluationDecision decide(const std::vector<ExperimentSection>& sections, const Constraints& limits) {
  const auto all = all_results(sections);
  if (all.empty()) return {std::nullopt, "no cell was measured, so there is nothing to decide"};
  try {
    return {recommend(all, limits), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

std::string limits_text(const Constraints& limits) {
  const auto given = given_constraints(limits);
  return given.empty() ? "" : constraints_text(given);
}

std::vector<LoadedResult> all_results(const std::vector<ExperimentSection>& sections) {
  std::vector<LoadedResult> all;
  for (const auto& section : sections) all.insert(all.end(), section.results.begin(), section.results.end());
  return all;
}

// A study summary starts with its own "# name" heading; inside a section it is one level down.
std::string demoted_headings(const std::string& markdown) {
  std::string out;
  bool line_start = true;
  for (const char c : markdown) {
    if (line_start && c == '#') out += '#';
    out += c;
    line_start = c == '\n';
  }
  return out;
}

namespace {

std::string figures_text(const CellAssessment& cell) {
  const auto& f = cell.figures;
  return fmt::format("P99 {:.4g} ms, {:.4g} inferences/s, {}", f.p99_ms, f.inferences_per_s,
                     f.peak_rss_mb > 0 ? fmt::format("{:.0f} MB", f.peak_rss_mb) : "memory not measured");
}

}  // namespace

std::vector<VerdictRow> verdict_rows(const Recommendation& decision) {
  std::vector<VerdictRow> rows;
  const auto row = [&rows](const std::string& model, const std::string& objective, const std::string& machine,
                           const std::vector<CellAssessment>& ranked, const std::vector<CellAssessment>& rejected) {
    VerdictRow r{model, objective, machine, "", "", "", "none"};
    if (!rejected.empty())
      r.ruled_out = fmt::format("{} (first: {}: {})", rejected.size(), rejected.front().label, rejected.front().binding());
    if (!ranked.empty()) {
      r.pick = ranked.front().label;
      r.figures = figures_text(ranked.front());
      if (ranked.size() > 1) r.runner_up = ranked[1].label;
    }
    rows.push_back(std::move(r));
  };
  for (const auto& m : decision.models) row(m.model, m.objective, m.machine, m.ranked, m.rejected);
  for (const auto& f : decision.families) row(f.family + " (every precision)", f.objective, f.machine, f.ranked, f.rejected);
  return rows;
}

namespace {

// With results from several machines each row names its machine: a pick belongs to one machine.
std::string verdict_table(const Recommendation& decision) {
  const auto rows = verdict_rows(decision);
  const bool machines = std::any_of(rows.begin(), rows.end(), [](const VerdictRow& r) { return !r.machine.empty(); });
  std::string out = machines ? "| model | machine | objective | pick | its figures | runner-up | ruled out |\n"
                               "| --- | --- | --- | --- | --- | --- | --- |\n"
                             : "| model | objective | pick | its figures | runner-up | ruled out |\n"
                               "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& r : rows)
    out += fmt::format("| {} |{} {} | {} | {} | {} | {} |\n", r.model, machines ? " " + r.machine + " |" : "", r.objective,
                       r.pick.empty() ? "**no cell meets the limits**" : "**" + r.pick + "**",
                       r.figures.empty() ? "-" : r.figures, r.runner_up.empty() ? "-" : r.runner_up, r.ruled_out);
  return out;
}

}  // namespace

std::string evaluation_markdown(const EvaluationHeader& header, const std::vector<ExperimentSection>& sections,
                                const EvaluationDecision& decision) {
  std::string out = fmt::format("# Evaluation: {}{}\n\n", header.name, header.quick ? " (--quick)" : "");
  if (!header.description.empty()) out += header.description + "\n\n";
  out += "| # | experiment | file | cells | outcome |\n| --: | --- | --- | --: | --- |\n";
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    out += fmt::format("| {} | {} | {} | {} | {}{} |\n", i + 1, s.title, s.file, s.results.size(), outcome_text(s.outcome),
                       s.reason.empty() ? "" : ": " + s.reason);
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    out += fmt::format("\n## {}. {}\n\n`{}`: {}{}\n\n", i + 1, s.title, s.file, outcome_text(s.outcome),
                       s.reason.empty() ? "" : " (" + s.reason + ")");
    if (!s.unsupported.empty()) {
      out += "Left out, as `infermark check` found they cannot run here:\n\n";
      for (const auto& line : s.unsupported) out += "- " + line + "\n";
      out += "\n";
    }
    if (!s.summary_markdown.empty()) out += demoted_headings(s.summary_markdown) + "\n";
  }
  out += "\n## Decision\n\n";
  out += header.limits_text.empty() ? "Without limits: cells ranked by P99.\n\n"
                                    : "Limits of the suite: " + header.limits_text + ".\n\n";
  if (!decision.recommendation) return out + "No decision: " + decision.error + ".\n";
  out += verdict_table(*decision.recommendation) + "\n";
  out += demoted_headings(to_markdown(*decision.recommendation));
  return out;
}

}  // namespace infermark::report

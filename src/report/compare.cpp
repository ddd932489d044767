#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/markdown_table.hpp"
#include "core/named_enum.hpp"
#include "report/comparison_table.hpp"
#include "report/result_set.hpp"
#include "result/cell_outcome.hpp"
#include "stats/significance.hpp"

namespace infermark::report {
namespace {

using nlohmann::json;

double change_pct(double baseline, double candidate) { return (candidate - baseline) / baseline * 100.0; }

// Peak RSS: one reading per run, so no test; the threshold alone decides.
constexpr const char* kThresholdOnly = "one reading per run (threshold only)";

// Set by not_judged(): a metric with no basis for a judgement keeps its reason.
bool unjudgeable(const MetricChange& m) { return m.verdict == Verdict::kNotJudged && !m.note.empty(); }

// Significance tells whether a change is real; the threshold whether it matters.
void judge(MetricChange& m, double threshold_pct) {
  if (unjudgeable(m)) return;
  const double worse_pct = m.lower_is_better ? m.change_pct : -m.change_pct;
  if (!m.significant) {
    m.verdict = Verdict::kNoSignificantChange;
  } else if (worse_pct > threshold_pct) {
    m.verdict = Verdict::kRegression;
  } else if (worse_pct < -threshold_pct) {
    m.verdict = Verdict::kImprovement;
  } else {
    m.verdict = Verdict::kNoSignificantChange;
    if (m.method != kThresholdOnly)
      m.note = fmt::format("statistically significant but within the {:g}% threshold", threshold_pct);
  }
}

MetricChange metric(std::string name, std::string unit, bool lower_is_better, double baseline, double candidate) {
  MetricChange m;
  m.metric = std::move(name);
  m.unit = std::move(unit);
  m.lower_is_better = lower_is_better;
  m.baseline = baseline;
  m.candidate = candidate;
  m.change_pct = baseline != 0.0 ? change_pct(baseline, candidate) : 0.0;
  return m;
}

void not_judged(MetricChange& m, std::string why) {
  m.verdict = Verdict::kNotJudged;
  m.method = "-";
  m.note = std::move(why);
}

// Without samples only the stored 95% intervals remain: disjoint intervals count as significant.
void judge_by_intervals(MetricChange& m, const std::optional<stats::Interval>& base, const std::optional<stats::Interval>& cand) {
  if (!base || !cand) return not_judged(m, "no stored 95% interval on both sides (too few samples for this percentile)");
  m.method = "stored 95% CIs (no samples)";
  m.significant = !stats::intervals_overlap(*base, *cand);
}

// P50, P99 and mean latency of one matched pair.
std::vector<MetricChange> latency_changes(const result::RunResult& base, const result::RunResult& cand,
                                          const CompareSettings& s) {
  const auto& bl = *base.latency_ms;
  const auto& cl = *cand.latency_ms;
  auto p50 = metric("P50 latency", "ms", true, bl.at(50).value, cl.at(50).value);
  auto p99 = metric("P99 latency", "ms", true, bl.at(99).value, cl.at(99).value);
  auto mean = metric("mean latency", "ms", true, bl.mean, cl.mean);

  // Ratios need a non-zero baseline; a (degenerate) zero latency falls back to the intervals.
  if (!base.samples_ms.empty() && !cand.samples_ms.empty() && bl.at(50).value > 0 && bl.at(99).value > 0) {
    const auto u = stats::mann_whitney_u(base.samples_ms, cand.samples_ms);
    const auto ratios = stats::bootstrap_percentile_ratios(base.samples_ms, cand.samples_ms, {50.0, 99.0},
                                                           {s.bootstrap_resamples, 1.0 - s.alpha, s.seed});
    for (auto* m : {&p50, &mean}) {
      m->method = "Mann-Whitney U";
      m->p_value = u.p_value;
      m->significant = u.p_value < s.alpha;
    }
    p50.ratio_ci = ratios[0].ci;
    // The U test is about location, not the tail, so P99 is judged by its own interval.
    p99.method = "bootstrap CI of P99 ratio";
    p99.ratio_ci = ratios[1].ci;
    p99.significant = ratios[1].ci.low > 1.0 || ratios[1].ci.high < 1.0;
  } else {
    judge_by_intervals(p50, bl.at(50).ci95, cl.at(50).ci95);
    judge_by_intervals(p99, bl.at(99).ci95, cl.at(99).ci95);
    judge_by_intervals(mean, bl.mean_ci95, cl.mean_ci95);
  }
  return {p50, p99, mean};
}

bool closed_loop(const result::ScenarioDescription& s) {
  using loadgen::Scenario;
  return result::ran(s, Scenario::kSingleStream) || result::ran(s, Scenario::kConcurrency) || result::ran(s, Scenario::kOffline);
}

MetricChange throughput_change(const result::RunResult& base, const result::RunResult& cand, const MetricChange& mean) {
  auto m = metric("throughput", "inferences/s", false, base.throughput.inferences_per_s, cand.throughput.inferences_per_s);
  if (!closed_loop(base.scenario))
    not_judged(m, "open-loop scenario: throughput follows the arrival rate");
  else if (unjudgeable(mean))
    not_judged(m, "mean latency could not be judged");
  else {
    // Closed loop (Little's law): throughput = concurrency x batch / mean latency, so it moves
    // exactly when the mean does; one value per run admits no test of its own.
    m.method = "via mean latency (closed loop)";
    m.significant = mean.significant;
    m.p_value = mean.p_value;
  }
  return m;
}

MetricChange memory_change(const result::RunResult& base, const result::RunResult& cand) {
  auto m = metric("peak RSS", "MB", true, base.memory.peak_rss_mb, cand.memory.peak_rss_mb);
  if (base.memory.peak_rss_mb <= 0 || cand.memory.peak_rss_mb <= 0) {
    not_judged(m, "peak RSS not recorded on both sides");
  } else {
    // One high-water mark per run and nearly deterministic for a given model and framework.
    m.method = kThresholdOnly;
    m.significant = true;
  }
  return m;
}

std::string status_problem(const std::string& side, const result::RunResult& r) { return side + " " + result::failure_text(r); }

// One result per key; a folder holding several runs of a cell uses the latest.
std::map<CellKey, const LoadedResult*> index_by_key(const std::vector<LoadedResult>& results, const std::string& side,
                                                    std::vector<std::string>& notes) {
  std::map<CellKey, const LoadedResult*> index;
  for (const auto& r : results) {
    auto& slot = index[cell_key(r.result)];
    if (slot) {
      const bool newer = r.result.started_at >= slot->result.started_at;
      notes.push_back(fmt::format("{} has several results for {}; using the latest ({}), ignoring {}", side,
                                  describe(cell_key(r.result)), newer ? r.path : slot->path, newer ? slot->path : r.path));
      if (!newer) continue;
    }
    slot = &r;
  }
  return index;
}

std::string model_list(const std::vector<LoadedResult>& results) {
  std::set<std::string> names;
  for (const auto& r : results) names.insert(r.result.model.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string machine_note(const CellComparison& cell, const result::RunResult& b, const result::RunResult& c) {
  const auto base_cpu = b.environment.value("cpu_model", ""), cand_cpu = c.environment.value("cpu_model", "");
  if (base_cpu == cand_cpu && b.backend.version == c.backend.version) return "";
  std::string note = describe(cell.key) + ":";
  if (base_cpu != cand_cpu) note += fmt::format(" baseline ran on '{}', candidate on '{}';", base_cpu, cand_cpu);
  if (b.backend.version != c.backend.version)
    note += fmt::format(" {} {} -> {};", b.backend.name, b.backend.version, c.backend.version);
  note.pop_back();
  return note;
}

// Cores kept busy by other processes while the cell ran: the machine's busy share minus this process's.
std::optional<double> other_load_cores(const result::RunResult& r) {
  if (!r.resources || !r.environment.is_object()) return std::nullopt;
  const int cores = r.environment.value("logical_cores", 0);
  if (cores <= 0) return std::nullopt;
  const auto& s = r.resources->summary;
  return std::max(0.0, s.mean_system_cpu_percent / 100.0 * cores - s.mean_process_cpu_percent / 100.0);
}

// A change measured while other work competed for the CPU may be the machine's, not the code's.
std::string load_note(const CellComparison& cell, const result::RunResult& b, const result::RunResult& c) {
  const auto base = other_load_cores(b), cand = other_load_cores(c);
  if (!base || !cand || std::abs(*base - *cand) < 0.25) return "";
  return fmt::format(
      "{}: other processes kept {:.2f} cores busy during the baseline's run and {:.2f} during the candidate's; "
      "part of any change may be that load",
      describe(cell.key), *base, *cand);
}

std::string significance_text(const MetricChange& m) {
  std::vector<std::string> parts;
  if (m.p_value) parts.push_back(fmt::format("p={:.3g}", *m.p_value));
  if (m.ratio_ci)
    parts.push_back(fmt::format("ratio {:.3f} [{:.3f}, {:.3f}]", m.candidate / m.baseline, m.ratio_ci->low, m.ratio_ci->high));
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

json interval_json(const std::optional<stats::Interval>& i) { return i ? json::array({i->low, i->high}) : json(nullptr); }

json key_json(const CellKey& k) {
  return {{"model", k.model}, {"backend", k.backend},   {"intra_op_threads", k.threads}, {"precision", k.precision},
          {"batch", k.batch}, {"scenario", k.scenario}, {"label", describe(k)}};
}

}  // namespace

CellComparison compare_cell(const CellKey& key, const LoadedResult& base, const LoadedResult& cand, const CompareSettings& s) {
  CellComparison cell{key, base.path, cand.path, {}, {}};
  const auto& b = base.result;
  const auto& c = cand.result;
  const bool base_ok = b.status == result::CellStatus::kOk && b.latency_ms;
  const bool cand_ok = c.status == result::CellStatus::kOk && c.latency_ms;
  if (!base_ok || !cand_ok) {
    if (!cand_ok) cell.problem = status_problem("candidate", c);
    if (!base_ok) cell.problem += (cell.problem.empty() ? "" : "; ") + status_problem("baseline", b);
    return cell;
  }
  cell.metrics = latency_changes(b, c, s);
  cell.metrics.push_back(throughput_change(b, c, cell.metrics[2]));
  cell.metrics.push_back(memory_change(b, c));
  for (auto& m : cell.metrics) judge(m, s.threshold_pct);
  return cell;
}

CellKey cell_key(const result::RunResult& r) {
  auto threads = effective_setting(r, "intra_op_threads");
  if (threads.empty() && r.requested.intra_op_threads > 0) threads = std::to_string(r.requested.intra_op_threads);
  return {r.model.name, backend_label(r), threads, r.requested.precision, r.scenario.batch, result::scenario_label(r.scenario)};
}

std::string describe(const CellKey& k) {
  std::string label = k.model + ": " + k.backend;
  if (!k.threads.empty()) label += " t" + k.threads;
  if (k.precision != "fp32") label += " " + k.precision;
  if (k.batch != 1) label += " batch " + std::to_string(k.batch);
  if (k.scenario != loadgen::name_of(loadgen::Scenario::kSingleStream)) label += " " + k.scenario;
  return label;
}

std::string verdict_name(Verdict v) {
  static constexpr NamedValue<Verdict> kVerdicts[] = {{Verdict::kRegression, "regression"},
                                                      {Verdict::kImprovement, "improvement"},
                                                      {Verdict::kNoSignificantChange, "no significant change"},
                                                      {Verdict::kNotJudged, "not judged"}};
  return std::string(name_in(kVerdicts, v));
}

bool CellComparison::has_regression() const {
  // A candidate that no longer completes is the worst regression of all.
  if (!problem.empty() && problem.starts_with("candidate")) return true;
  return std::any_of(metrics.begin(), metrics.end(), [](const MetricChange& m) { return m.verdict == Verdict::kRegression; });
}

int Comparison::regressions() const {
  return static_cast<int>(std::count_if(cells.begin(), cells.end(), [](const CellComparison& c) { return c.has_regression(); }));
}

Comparison compare_results(const std::vector<LoadedResult>& baseline, const std::vector<LoadedResult>& candidate,
                           const CompareSettings& settings) {
  Comparison out;
  out.settings = settings;
  const auto base_index = index_by_key(baseline, "the baseline", out.notes);
  const auto cand_index = index_by_key(candidate, "the candidate", out.notes);
  for (const auto& [key, base] : base_index) {
    const auto found = cand_index.find(key);
    if (found == cand_index.end()) {
      out.unmatched.push_back({key, "baseline", base->path});
      continue;
    }
    out.cells.push_back(compare_cell(key, *base, *found->second, settings));
    for (auto note : {machine_note(out.cells.back(), base->result, found->second->result),
                      load_note(out.cells.back(), base->result, found->second->result)})
      if (!note.empty()) out.notes.push_back(std::move(note));
  }
  for (const auto& [key, cand] : cand_index)
    if (!base_index.contains(key)) out.unmatched.push_back({key, "candidate", cand->path});

  if (out.cells.empty()) {
    const auto base_models = model_list(baseline), cand_models = model_list(candidate);
    std::set<std::string> base_names, shared;
    for (const auto& r : baseline) base_names.insert(r.result.model.name);
    for (const auto& r : candidate)
      if (base_names.contains(r.result.model.name)) shared.insert(r.result.model.name);
    if (shared.empty())
      throw Error(fmt::format("nothing to compare: the baseline has results of {} and the candidate of {} (different models)",
                              base_models, cand_models));
    std::vector<std::string> base_cells, cand_cells;
    for (const auto& [key, r] : base_index) base_cells.push_back(describe(key));
    for (const auto& [key, r] : cand_index) cand_cells.push_back(describe(key));
    throw Error(
        fmt::format("nothing to compare: no baseline cell matches a candidate cell (matched by model, backend, threads, "
                    "precision, batch and scenario); baseline: {}; candidate: {}",
                    fmt::join(base_cells, ", "), fmt::join(cand_cells, ", ")));
  }
  return out;
}

std::string to_markdown(const Comparison& c) {
  const auto& s = c.settings;
  std::string out = "# infermark compare: baseline vs candidate\n\n";
  out += fmt::format(
      "Latency with samples: Mann-Whitney U (two-sided, alpha {}) for P50 and mean, a seeded bootstrap ({} resamples) {:g}% CI "
      "of "
      "the candidate/baseline ratio for P50 and P99; without samples: the stored 95% CIs (disjoint = significant). A change is a "
      "regression or improvement when it is significant and larger than {:g}%.\n\n",
      s.alpha, s.bootstrap_resamples, (1.0 - s.alpha) * 100.0, s.threshold_pct);
  const std::vector<MarkdownColumn> columns{{"metric", false}, {"baseline", true},      {"candidate", true}, {"change", true},
                                            {"method", false}, {"p / ratio CI", false}, {"verdict", false}};
  for (const auto& cell : c.cells) {
    out += fmt::format("## {}\n\nbaseline: {}\ncandidate: {}\n\n", describe(cell.key), cell.baseline_path, cell.candidate_path);
    if (!cell.problem.empty()) {
      out += fmt::format("**{}**: {}\n\n", cell.has_regression() ? "regression" : "not compared", cell.problem);
      continue;
    }
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes;
    for (const auto& m : cell.metrics) {
      rows.push_back({m.metric + " " + m.unit, format_number(m.baseline), format_number(m.candidate),
                      fmt::format("{:+.1f}%", m.change_pct), m.method, significance_text(m), verdict_name(m.verdict)});
      if (!m.note.empty()) notes.push_back(fmt::format("- {}: {}", m.metric, m.note));
    }
    out += markdown_table(columns, rows);
    for (const auto& n : notes) out += n + "\n";
    out += "\n";
  }
  if (!c.unmatched.empty()) {
    out += "## Unmatched cells\n\n";
    for (const auto& u : c.unmatched) out += fmt::format("- only in the {}: {} ({})\n", u.side, describe(u.key), u.path);
    out += "\n";
  }
  if (!c.notes.empty()) {
    out += "## Notes\n\n";
    for (const auto& n : c.notes) out += "- " + n + "\n";
    out += "\n";
  }
  int improvements = 0;
  for (const auto& cell : c.cells)
    improvements +=
        std::any_of(cell.metrics.begin(), cell.metrics.end(), [](auto& m) { return m.verdict == Verdict::kImprovement; });
  out += fmt::format("Summary: {} of {} matched cell(s) regressed, {} improved; {} unmatched.\n", c.regressions(), c.cells.size(),
                     improvements, c.unmatched.size());
  return out;
}

json to_json(const Comparison& c) {
  json cells = json::array();
  for (const auto& cell : c.cells) {
    json metrics = json::array();
    for (const auto& m : cell.metrics)
      metrics.push_back({{"metric", m.metric},
                         {"unit", m.unit},
                         {"lower_is_better", m.lower_is_better},
                         {"baseline", m.baseline},
                         {"candidate", m.candidate},
                         {"change_pct", m.change_pct},
                         {"significant", m.significant},
                         {"method", m.method},
                         {"p_value", m.p_value ? json(*m.p_value) : json(nullptr)},
                         {"ratio_ci", interval_json(m.ratio_ci)},
                         {"verdict", verdict_name(m.verdict)},
                         {"note", m.note}});
    cells.push_back({{"cell", key_json(cell.key)},
                     {"baseline", cell.baseline_path},
                     {"candidate", cell.candidate_path},
                     {"problem", cell.problem},
                     {"regression", cell.has_regression()},
                     {"metrics", metrics}});
  }
  json unmatched = json::array();
  for (const auto& u : c.unmatched) unmatched.push_back({{"cell", key_json(u.key)}, {"side", u.side}, {"path", u.path}});
  return {{"settings",
           {{"alpha", c.settings.alpha},
            {"threshold_pct", c.settings.threshold_pct},
            {"bootstrap_resamples", c.settings.bootstrap_resamples},
            {"seed", c.settings.seed}}},
          {"cells", cells},
          {"unmatched", unmatched},
          {"notes", c.notes},
          {"regressions", c.regressions()}};
}

}  // namespace infermark::report

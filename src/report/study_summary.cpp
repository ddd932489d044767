#include "report/study_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "core/markdown_table.hpp"
#include "report/comparison_table.hpp"
#include "report/field_guides.hpp"
#include "report/shape_cliff.hpp"
#include "stats/trend.hpp"

namespace infermark::report {
namespace {

bool measured(const result::RunResult& r) {
  return r.status == result::CellStatus::kOk && r.latency_ms && r.throughput.inferences_per_s > 0;
}
double p99(const result::RunResult& r) { return r.latency_ms->at(99).value; }
double qps(const result::RunResult& r) { return r.throughput.inferences_per_s; }

std::string best_per_backend(const std::vector<LoadedResult>& results) {
  std::map<std::string, const result::RunResult*> best;
  for (const auto& c : results) {
    if (!measured(c.result)) continue;
    auto& slot = best[c.result.backend.name];
    if (!slot || qps(c.result) > qps(*slot)) slot = &c.result;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [backend, r] : best)
    rows.push_back({backend, cell_label(*r), fmt::format("{:.1f}", qps(*r)), fmt::format("{:.2f}", r->latency_ms->at(50).value),
                    fmt::format("{:.2f}", p99(*r))});
  return "### Highest throughput per backend\n\n" +
         markdown_table({{"backend"}, {"cell"}, {"inferences/s", true}, {"P50 ms", true}, {"P99 ms", true}}, rows) + "\n";
}

std::string frontier(const std::vector<LoadedResult>& results) {
  std::string out = "### Latency/throughput frontier (no other cell has both lower P99 and higher throughput)\n\n";
  for (auto i : pareto_frontier(results))
    out += fmt::format("- {}: P99 {:.2f} ms at {:.1f} inferences/s\n", cell_label(results[i].result), p99(results[i].result),
                       qps(results[i].result));
  return out + "\n";
}

// The performance-evaluation guide's rule: about 1.5 x physical cores is usually the best intra-op thread count.
std::string threads_rule(const std::vector<LoadedResult>& results) {
  std::map<std::string, std::map<int, double>> by_backend;       // backend -> threads -> best inferences/s
  std::map<std::string, std::map<int, std::string>> overridden;  // backend -> threads asked -> threads the framework ran
  int cores = 0;
  for (const auto& c : results) {
    if (!measured(c.result)) continue;
    const auto threads = effective_setting(c.result, "intra_op_threads");
    if (threads.empty() || !std::isdigit(static_cast<unsigned char>(threads[0]))) continue;
    if (const auto asked = requested_but_not_applied(c.result, "intra_op_threads");
        !asked.empty() && std::isdigit(static_cast<unsigned char>(asked[0])))
      overridden[c.result.backend.name][std::stoi(asked)] = threads;
    auto& best = by_backend[c.result.backend.name][std::stoi(threads)];
    best = std::max(best, qps(c.result));
    cores = c.result.environment.value("physical_cores", cores);
  }
  if (by_backend.empty() || cores == 0) return "";
  const int rule = static_cast<int>(std::lround(1.5 * cores));
  std::string out =
      fmt::format("### Thread count against the rule of thumb (1.5 x {} physical cores = {} threads)\n\n", cores, rule);
  for (const auto& [backend, by_threads] : by_backend) {
    const auto best =
        std::max_element(by_threads.begin(), by_threads.end(), [](auto& a, auto& b) { return a.second < b.second; });
    const auto at_rule = by_threads.find(rule);
    out += fmt::format("- {}: best at {} threads ({:.1f} inferences/s); ", backend, best->first, best->second);
    const auto& asked = overridden[backend];
    if (at_rule == by_threads.end() && asked.count(rule))
      out += fmt::format("{} threads was asked for, but {} ran {}\n", rule, backend, asked.at(rule));
    else
      out += at_rule == by_threads.end() ? fmt::format("{} threads was not measured\n", rule)
                                         : fmt::format("at {} threads {:.1f} ({:+.1f}%) — the rule {}\n", rule, at_rule->second,
                                                       (at_rule->second / best->second - 1) * 100,
                                                       at_rule->first == best->first ? "holds" : "does not hold here");
  }
  return out + "\n";
}

// Performance evaluation guide §3.3: "10 instances take 1.2x one instance" when weights are shared, against linear
// growth for separate copies. Peak RSS at the most lanes over peak RSS at one lane.
std::string instances_memory(const std::vector<LoadedResult>& results) {
  struct Span {
    int min_lanes = 1 << 30, max_lanes = 0;
    double rss_at_min = 0, rss_at_max = 0;
  };
  std::map<std::string, Span> spans;  // "backend, shared|separate"
  for (const auto& c : results) {
    const auto& r = c.result;
    if (r.status != result::CellStatus::kOk || r.memory.peak_rss_mb <= 0) continue;
    const int lanes = r.scenario.parameters.lanes.value_or(1);
    const auto sharing = r.scenario.parameters.sessions.value_or(result::SessionSharing::kShared);
    auto& s = spans[r.backend.name + ", " + std::string(result::name_of(sharing))];
    if (lanes < s.min_lanes) s.min_lanes = lanes, s.rss_at_min = r.memory.peak_rss_mb;
    if (lanes > s.max_lanes) s.max_lanes = lanes, s.rss_at_max = r.memory.peak_rss_mb;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, s] : spans)
    if (s.max_lanes > s.min_lanes)
      rows.push_back({key, fmt::format("{} -> {}", s.min_lanes, s.max_lanes), fmt::format("{:.0f}", s.rss_at_min),
                      fmt::format("{:.0f}", s.rss_at_max), fmt::format("{:.2f}x", s.rss_at_max / s.rss_at_min),
                      fmt::format("{:.2f}x", static_cast<double>(s.max_lanes) / s.min_lanes)});
  if (rows.empty()) return "";
  return "### Instances and memory (" + markdown_citation(FieldGuide::kPerformanceEvaluation, "§3.3") +
         ": shared weights keep 10 instances near 1.2x one; copies grow linearly)\n\n" +
         markdown_table({{"backend, sessions"},
                         {"instances"},
                         {"peak MB at fewest", true},
                         {"peak MB at most", true},
                         {"memory ratio", true},
                         {"instance ratio", true}},
                        rows) +
         "\n";
}

// Issue 8: the slowdown ("cliff") of inputs whose shapes vary per query against one fixed
// shape, per backend, with the work ratio (mean input elements per query over the fixed shape's)
// so a range whose mean size differs from the fixed shape is not mistaken for a cliff.
std::string shape_cliff(const std::vector<LoadedResult>& results) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : results) {
    const auto& r = c.result;
    if (!has_varying_shapes(r) || !measured(r)) continue;
    const result::RunResult* fixed = fixed_shape_counterpart(r, results);
    const auto& shapes = *r.scenario.parameters.varying_shapes;
    std::string ranges;
    for (const auto& [name, range] : shapes.ranges) ranges += (ranges.empty() ? "" : ", ") + name + "=" + range;
    auto preparation = effective_setting(r, "shape_mode");
    if (preparation.empty()) preparation = effective_setting(r, "shape_preparation");
    const auto cliff = fixed ? report::shape_cliff(r, *fixed) : ShapeCliff{};
    const double work = cliff.work, slowdown = cliff.slowdown;
    rows.push_back({r.model.name + ", " + r.backend.name, ranges, preparation, std::to_string(shapes.distinct_shapes.value_or(0)),
                    fixed ? fmt::format("{:.2f}", fixed->latency_ms->mean) : "not measured",
                    fmt::format("{:.2f}", r.latency_ms->mean), fixed ? fmt::format("{:.2f}x", slowdown) : "-",
                    fixed ? fmt::format("{:.2f}x", work) : "-", fixed && work > 0 ? fmt::format("{:.2f}x", slowdown / work) : "-",
                    fixed ? fmt::format("{:.1f} -> {:.1f}", qps(*fixed), qps(r)) : fmt::format("{:.1f}", qps(r)),
                    fixed ? fmt::format("{:.0f} -> {:.0f}", fixed->memory.peak_rss_mb, r.memory.peak_rss_mb)
                          : fmt::format("{:.0f}", r.memory.peak_rss_mb)});
  }
  if (rows.empty()) return "";
  return "### Varying shapes against a fixed shape (the cliff)\n\n"
         "Slowdown: mean latency with shapes drawn per query over the fixed shape's. Work: mean input elements per "
         "query over the fixed shape's (bucketing rounds sizes up, so it feeds more). Per unit of work: slowdown / work, "
         "the cost of the shape changes themselves. Peak MB: the worker's peak RSS (a compiled model per shape costs "
         "memory).\n\n" +
         markdown_table({{"model, backend"},
                         {"shapes"},
                         {"preparation"},
                         {"distinct shapes", true},
                         {"fixed mean ms", true},
                         {"varying mean ms", true},
                         {"slowdown", true},
                         {"work", true},
                         {"per unit of work", true},
                         {"inferences/s fixed -> varying", true},
                         {"peak MB fixed -> varying", true}},
                        rows) +
         "\n";
}

// Latency per shape of every varying cell (the seam records each query against its shape), in
// order of work. Each shape's P50 is compared with what its size predicts — a straight line
// through every shape's (input elements, P50), fixed costs included — so a cliff is a shape slower
// than the size trend, not a small shape whose fixed costs weigh more per element. The cost per
// element against the fixed shape's is shown beside it.
std::string latency_by_shape(const std::vector<LoadedResult>& results) {
  std::string out;
  for (const auto& c : results) {
    const auto& r = c.result;
    if (!has_varying_shapes(r) || !measured(r)) continue;
    const auto& sets = r.scenario.parameters.varying_shapes->sets;
    if (sets.empty() || !sets[0].group) continue;  // results from before per-shape latency
    const result::RunResult* fixed = fixed_shape_counterpart(r, results);
    const double fixed_per_element =
        fixed && input_elements(*fixed) > 0 ? fixed->latency_ms->at(50).value / input_elements(*fixed) : 0;
    std::vector<result::ShapeSetRecord> rows;
    for (const auto& row : sets)
      if (row.queries > 0) rows.push_back(row);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.input_elements < b.input_elements; });
    if (rows.empty()) continue;
    std::vector<double> elements, p50s;
    for (const auto& row : rows) {
      elements.push_back(row.input_elements);
      p50s.push_back(row.p50_ms.value_or(0.0));
    }
    const bool trend_fits = rows.size() >= 3 && elements.front() < elements.back();
    const auto trend = trend_fits ? stats::fit_trend(elements, p50s) : stats::Trend{};
    std::vector<std::vector<std::string>> table;
    std::string cliff;
    double worst = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double predicted = trend.intercept + trend.slope * elements[i];
      const double vs_trend = trend_fits && predicted > 0 ? p50s[i] / predicted : 0;
      const double cost = fixed_per_element > 0 && elements[i] > 0 ? p50s[i] / elements[i] / fixed_per_element : 0;
      if (vs_trend > worst) {
        worst = vs_trend;
        cliff = rows[i].group.value_or("");
      }
      table.push_back({rows[i].group.value_or(""), std::to_string(rows[i].queries), fmt::format("{:.2f}", p50s[i]),
                       fmt::format("{:.2f}", rows[i].p99_ms.value_or(0.0)), vs_trend > 0 ? fmt::format("{:.2f}x", vs_trend) : "-",
                       cost > 0 ? fmt::format("{:.2f}x", cost) : "-"});
    }
    out += "#### " + r.model.name + ", " + r.backend.name + " (" + std::to_string(table.size()) + " shapes)\n\n";
    out += markdown_table({{"shape"},
                           {"queries", true},
                           {"P50 ms", true},
                           {"P99 ms", true},
                           {"P50 vs size trend", true},
                           {"cost per element vs fixed", true}},
                          table);
    if (trend_fits)
      out +=
          fmt::format("\nSlowest shape for its size: {} at {:.2f}x the size trend's P50 ({:.4f} ms per 1k input elements{}){}.\n",
                      cliff, worst, trend.slope * 1000, fmt::format(", R² {:.2f}", trend.r_squared),
                      worst >= 1.25 ? ": a cliff" : ": no cliff (within 25%)");
    out += "\n";
  }
  if (out.empty()) return "";
  return "### Latency by shape\n\nEach query's latency is recorded against the shape it ran. P50 vs size trend: the shape's "
         "P50 over a straight line fitted through every shape's (input elements, P50), so 1.00x is what its size predicts and "
         "a cliff is a shape well above it. Cost per element vs fixed: P50 per input element over the fixed shape's (fixed "
         "costs make small shapes dearer per element).\n\n" +
         out;
}

std::string file_stem(const LoadedResult& c) { return std::filesystem::path(c.path).stem().string(); }

bool meets(const result::RunResult& r, double target) { return measured(r) && p99(r) <= target; }

// The highest-throughput cell meeting the target among `cells` (indices into `ran`), or none.
std::optional<std::size_t> best_meeting(const std::vector<LoadedResult>& ran, const std::vector<std::size_t>& cells,
                                        double target) {
  std::optional<std::size_t> best;
  for (auto i : cells)
    if (meets(ran[i].result, target) && (!best || qps(ran[i].result) > qps(ran[*best].result))) best = i;
  return best;
}

}  // namespace

bool search_found(const std::vector<LoadedResult>& ran, double p99_target_ms) {
  return std::any_of(ran.begin(), ran.end(), [&](const LoadedResult& c) { return meets(c.result, p99_target_ms); });
}

std::string search_summary(const std::vector<LoadedResult>& ran, std::size_t matrix_size, double p99_target_ms) {
  std::map<std::string, std::vector<std::size_t>> groups;  // "model, backend" -> cells run
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < ran.size(); ++i) {
    groups[ran[i].result.model.name + ", " + ran[i].result.backend.name].push_back(i);
    all.push_back(i);
  }
  std::string out = fmt::format("### Guided search: highest throughput with P99 <= {:g} ms\n\n", p99_target_ms);
  out += fmt::format(
      "Ran {} of the {} cells of the full matrix. The search stops at a local best: a cell that no "
      "step along one axis, or one step along two, improves; where noise or the model gives throughput "
      "more than one peak, the full matrix (`sweep` without `--search`) may find a better one.\n\n",
      ran.size(), matrix_size);
  if (const auto chosen = best_meeting(ran, all, p99_target_ms))
    out += fmt::format("**Chosen: {}** ({}): {:.1f} inferences/s, P99 {:.2f} ms\n\n", file_stem(ran[*chosen]),
                       cell_label(ran[*chosen].result), qps(ran[*chosen].result), p99(ran[*chosen].result));
  else
    out += "**No cell it ran meets the target.**\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [group, cells] : groups) {
    const auto best = best_meeting(ran, cells, p99_target_ms);
    rows.push_back({group, best ? file_stem(ran[*best]) : "none meets the target",
                    best ? fmt::format("{:.1f}", qps(ran[*best].result)) : "-",
                    best ? fmt::format("{:.2f}", p99(ran[*best].result)) : "-", std::to_string(cells.size())});
  }
  out +=
      markdown_table({{"model, backend"}, {"best cell"}, {"inferences/s", true}, {"P99 ms", true}, {"cells run", true}}, rows) +
      "\n";
  std::string missed;
  for (const auto& c : ran)
    if (!meets(c.result, p99_target_ms))
      missed += measured(c.result) ? fmt::format("- {}: P99 {:.2f} ms\n", file_stem(c), p99(c.result))
                                   : fmt::format("- {}: {} ({})\n", file_stem(c), name_of(c.result.status), c.result.error);
  out += missed.empty() ? "Every cell run met the target.\n\n" : "Cells that missed the target:\n\n" + missed + "\n";
  return out;
}

std::vector<std::size_t> pareto_frontier(const std::vector<LoadedResult>& results) {
  std::vector<std::size_t> frontier;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& a = results[i].result;
    if (!measured(a)) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < results.size() && !dominated; ++j) {
      const auto& b = results[j].result;
      dominated = j != i && measured(b) && p99(b) <= p99(a) && qps(b) >= qps(a) && (p99(b) < p99(a) || qps(b) > qps(a));
    }
    if (!dominated) frontier.push_back(i);
  }
  std::sort(frontier.begin(), frontier.end(), [&](auto x, auto y) { return p99(results[x].result) < p99(results[y].result); });
  return frontier;
}

std::string study_summary(const std::vector<LoadedResult>& results, const std::vector<std::string>& axis_flags) {
  std::string out = best_per_backend(results) + frontier(results);
  const auto has_axis = [&](const char* flag) {
    return std::find(axis_flags.begin(), axis_flags.end(), flag) != axis_flags.end();
  };
  if (has_axis("threads")) out += threads_rule(results);
  if (has_axis("concurrency")) out += instances_memory(results);
  out += shape_cliff(results);
  out += latency_by_shape(results);
  return out;
}

}  // namespace infermark::report

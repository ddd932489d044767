#include "report/study_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/comparison_table.hpp"
#include "report/markdown_table.hpp"

namespace infermark::report {
namespace {

bool measured(const RunResult& r) { return r.status == "ok" && r.latency_ms && r.throughput.inferences_per_s > 0; }
double p99(const RunResult& r) { return r.latency_ms->at(99).value; }
double qps(const RunResult& r) { return r.throughput.inferences_per_s; }

std::string best_per_backend(const std::vector<LoadedResult>& results) {
  std::map<std::string, const RunResult*> best;
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

// The seed's rule: about 1.5 x physical cores is usually the best intra-op thread count.
std::string threads_rule(const std::vector<LoadedResult>& results) {
  std::map<std::string, std::map<int, double>> by_backend;  // backend -> threads -> best inferences/s
  int cores = 0;
  for (const auto& c : results) {
    if (!measured(c.result)) continue;
    const auto threads = effective_setting(c.result, "intra_op_threads");
    if (threads.empty() || !std::isdigit(static_cast<unsigned char>(threads[0]))) continue;
    auto& best = by_backend[c.result.backend.name][std::stoi(threads)];
    best = std::max(best, qps(c.result));
    cores = c.result.environment.value("physical_cores", cores);
  }
  if (by_backend.empty() || cores == 0) return "";
  const int rule = static_cast<int>(std::lround(1.5 * cores));
  std::string out = fmt::format("### Thread count against the rule of thumb (1.5 x {} physical cores = {} threads)\n\n", cores, rule);
  for (const auto& [backend, by_threads] : by_backend) {
    const auto best = std::max_element(by_threads.begin(), by_threads.end(), [](auto& a, auto& b) { return a.second < b.second; });
    const auto at_rule = by_threads.find(rule);
    out += fmt::format("- {}: best at {} threads ({:.1f} inferences/s); ", backend, best->first, best->second);
    out += at_rule == by_threads.end()
               ? fmt::format("{} threads was not measured\n", rule)
               : fmt::format("at {} threads {:.1f} ({:+.1f}%) — the rule {}\n", rule, at_rule->second,
                             (at_rule->second / best->second - 1) * 100, at_rule->first == best->first ? "holds" : "does not hold here");
  }
  return out + "\n";
}

// Seed 000 §3.3: "10 instances take 1.2x one instance" when weights are shared, against linear
// growth for separate copies. Peak RSS at the most lanes over peak RSS at one lane.
std::string instances_memory(const std::vector<LoadedResult>& results) {
  struct Span {
    int min_lanes = 1 << 30, max_lanes = 0;
    double rss_at_min = 0, rss_at_max = 0;
  };
  std::map<std::string, Span> spans;  // "backend, shared|separate"
  for (const auto& c : results) {
    const auto& r = c.result;
    if (r.status != "ok" || r.memory.peak_rss_mb <= 0) continue;
    const int lanes = r.scenario.parameters.value("lanes", 1);
    auto& s = spans[r.backend.name + ", " + r.scenario.parameters.value("sessions", std::string("shared"))];
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
  return "### Instances and memory (seed: shared weights keep 10 instances near 1.2x one; copies grow linearly)\n\n" +
         markdown_table({{"backend, sessions"}, {"instances"}, {"peak MB at fewest", true}, {"peak MB at most", true},
                         {"memory ratio", true}, {"instance ratio", true}},
                        rows) + "\n";
}

}  // namespace

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
  const auto has_axis = [&](const char* flag) { return std::find(axis_flags.begin(), axis_flags.end(), flag) != axis_flags.end(); };
  if (has_axis("threads")) out += threads_rule(results);
  if (has_axis("concurrency")) out += instances_memory(results);
  return out;
}

}  // namespace infermark::report

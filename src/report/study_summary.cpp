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
  if (std::find(axis_flags.begin(), axis_flags.end(), "threads") != axis_flags.end()) out += threads_rule(results);
  return out;
}

}  // namespace infermark::report

#include "probes/energy_counter.hpp"

#include <algorithm>

namespace infermark::probes {
namespace {

// The counter's value at `t_ns`, assuming constant power between two marks.
double joules_at(const std::vector<EnergyMark>& marks, std::int64_t t_ns) {
  const auto after =
      std::lower_bound(marks.begin(), marks.end(), t_ns, [](const EnergyMark& mark, std::int64_t t) { return mark.t_ns < t; });
  if (after == marks.end()) return marks.back().joules;
  if (after == marks.begin() || after->t_ns == t_ns) return after->joules;
  const auto before = std::prev(after);
  const double share = static_cast<double>(t_ns - before->t_ns) / static_cast<double>(after->t_ns - before->t_ns);
  return before->joules + share * (after->joules - before->joules);
}

}  // namespace

double joules_within(const std::vector<EnergyMark>& marks, const std::vector<TimeWindow>& windows) {
  if (marks.empty()) return 0.0;
  double joules = 0.0;
  for (const TimeWindow& window : windows)
    if (window.end_ns > window.begin_ns) joules += joules_at(marks, window.end_ns) - joules_at(marks, window.begin_ns);
  return joules;
}

double seconds_within(const std::vector<TimeWindow>& windows) {
  double seconds = 0.0;
  for (const TimeWindow& window : windows)
    if (window.end_ns > window.begin_ns) seconds += static_cast<double>(window.end_ns - window.begin_ns) * 1e-9;
  return seconds;
}

}  // namespace infermark::probes

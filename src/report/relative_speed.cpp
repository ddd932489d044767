#include "report/relative_speed.hpp"

#include <fmt/format.h>

#include <limits>

namespace infermark::report {
namespace {

bool completed(const result::RunResult& r) {
  return r.status == result::CellStatus::kOk && r.latency_ms && r.latency_ms->at(50).value > 0;
}

}  // namespace

std::vector<std::optional<RelativeSpeed>> relative_speeds(const std::vector<const result::RunResult*>& cells) {
  const result::RunResult* fastest = nullptr;
  for (const result::RunResult* r : cells)
    if (completed(*r) && (!fastest || r->latency_ms->at(50).value < fastest->latency_ms->at(50).value)) fastest = r;
  std::vector<std::optional<RelativeSpeed>> speeds(cells.size());
  if (!fastest) return speeds;
  const auto& base = fastest->latency_ms->at(50);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!completed(*cells[i])) continue;
    const auto& p50 = cells[i]->latency_ms->at(50);
    RelativeSpeed speed{p50.value / base.value, std::nullopt};
    // The fastest cell is the unit itself: its ratio has no spread of its own to show.
    if (cells[i] != fastest && p50.ci95 && base.ci95 && base.ci95->low > 0)
      speed.range = stats::Interval{p50.ci95->low / base.ci95->high, p50.ci95->high / base.ci95->low};
    speeds[i] = speed;
  }
  return speeds;
}

std::string relative_text(const std::optional<RelativeSpeed>& speed) {
  if (!speed) return "-";
  if (speed->ratio == 1.0) return "1.00×";
  std::string text = fmt::format("{:.2f}× slower", speed->ratio);
  if (speed->range) text += fmt::format(" ({:.2f}–{:.2f})", speed->range->low, speed->range->high);
  return text;
}

}  // namespace infermark::report

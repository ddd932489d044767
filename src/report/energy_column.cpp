#include "report/energy_column.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/markdown_table.hpp"

namespace infermark::report {
namespace {

bool measured(const result::RunResult& r) { return r.resources && r.resources->inferences_per_joule; }

// The sampler's reason, or what is missing from the result itself.
std::string why_not_measured(const result::RunResult& r) {
  if (!r.resources) return "the result has no resource record";
  const auto& energy = r.resources->summary.energy;
  if (!energy.available) return energy.source.empty() ? "no energy counter was readable" : energy.source;
  return "the energy counter did not advance over the measurement";  // available, yet 0 J
}

}  // namespace

bool any_energy_measured(const std::vector<const result::RunResult*>& cells) {
  return std::any_of(cells.begin(), cells.end(), [](const result::RunResult* r) { return measured(*r); });
}

std::string inferences_per_joule_cell(const result::RunResult& r) {
  return measured(r) ? format_number(*r.resources->inferences_per_joule) : "-";
}

std::string energy_footnote(const std::vector<const result::RunResult*>& cells) {
  std::size_t completed = 0, missing = 0;
  const result::RunResult* first_missing = nullptr;
  for (const result::RunResult* r : cells) {
    if (!r->latency_ms) continue;
    ++completed;
    if (measured(*r)) continue;
    ++missing;
    if (!first_missing) first_missing = r;
  }
  if (!first_missing) return "";
  return fmt::format(
      "inferences/J not measured here for {} of {} cells: {}; it needs readable RAPL counters "
      "(/sys/class/powercap/intel-rapl:*/energy_uj, root on recent kernels) for a CPU cell, or the NVML energy "
      "counter of the GPU a GPU cell ran on: no other device's counter stands in",
      missing, completed, why_not_measured(*first_missing));
}

}  // namespace infermark::report

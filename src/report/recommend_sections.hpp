// What the sections of a recommendation share: their titles, and whether any cell has a figure
// that earns its own column.
#pragma once

#include <fmt/format.h>

#include <string>

#include "report/recommend.hpp"

namespace infermark::report {

// " (served)" where the results mix origins, so each section says whose latencies it ranks.
template <typename Section>
std::string origin_suffix(const Section& s) {
  return s.origin_named ? fmt::format(" ({})", name_of(s.origin)) : std::string();
}

// "resnet50", "resnet50 on vm (CPU)", "resnet50 (served)".
template <typename Section>
std::string section_title(const std::string& name, const Section& s) {
  return name + (s.machine.empty() ? "" : " on " + s.machine) + origin_suffix(s);
}

bool any_label_top1(const Recommendation& rec);  // a cell judged against labels: the "top-1 vs labels" column
bool any_gflops(const Recommendation& rec);      // a cell with model FLOPs: the GFLOP/s and % of peak columns

}  // namespace infermark::report

// How much slower each completed cell is than the fastest of the cells it is compared with, as
// hyperfine prints it: "1.00×" for the lowest P50, "1.62× slower" for the others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "result/run_result.hpp"
#include "stats/latency_summary.hpp"

namespace infermark::report {

struct RelativeSpeed {
  double ratio = 1.0;  // this cell's P50 / the fastest cell's P50
  // The ratio's range when both P50s have a 95% interval: low / fastest high to high / fastest low.
  std::optional<stats::Interval> range;
};

// One entry per result; empty for a cell that did not complete with latencies (failed, crashed,
// ...), which is neither compared nor the fastest. Callers pass cells of one model on one machine.
std::vector<std::optional<RelativeSpeed>> relative_speeds(const std::vector<const result::RunResult*>& cells);

// "1.00×", "1.62× slower (1.55–1.70)", or "-" for a cell that was not compared.
std::string relative_text(const std::optional<RelativeSpeed>& speed);

}  // namespace infermark::report

// Least-squares linear trend with a 95% confidence interval for its slope: the basis of the soak
// test's leak and drift verdicts (a slope whose interval excludes zero is a real trend).
#pragma once

#include <span>

#include "stats/latency_summary.hpp"

namespace infermark::stats {

struct Trend {
  double slope = 0.0;  // y units per x unit
  double intercept = 0.0;
  Interval slope_ci95;  // Student-t, n - 2 degrees of freedom
  double r_squared = 0.0;
  std::size_t points = 0;
};

// Throws std::invalid_argument for fewer than 3 points, mismatched sizes, or constant x.
Trend fit_trend(std::span<const double> x, std::span<const double> y);

}  // namespace infermark::stats

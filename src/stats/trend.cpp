#include "stats/trend.hpp"

#include <cmath>
#include <stdexcept>

namespace infermark::stats {

Trend fit_trend(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::invalid_argument("trend: x and y differ in length");
  const auto n = x.size();
  if (n < 3) throw std::invalid_argument("trend: needs at least 3 points");
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
    syy += (y[i] - mean_y) * (y[i] - mean_y);
  }
  if (sxx == 0) throw std::invalid_argument("trend: x is constant");
  Trend t;
  t.points = n;
  t.slope = sxy / sxx;
  t.intercept = mean_y - t.slope * mean_x;
  const double residual = std::max(0.0, syy - t.slope * sxy);
  t.r_squared = syy > 0 ? 1.0 - residual / syy : 1.0;
  const double slope_se = std::sqrt(residual / static_cast<double>(n - 2) / sxx);
  const double half = student_t95(n - 2) * slope_se;
  t.slope_ci95 = {t.slope - half, t.slope + half};
  return t;
}

}  // namespace infermark::stats

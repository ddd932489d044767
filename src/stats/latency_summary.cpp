#include "stats/latency_summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

namespace infermark::stats {
namespace {

// z-value of the two-sided 95% normal interval (97.5% quantile of N(0, 1)).
constexpr double kZ95 = 1.959963984540054;

// Exact 97.5% quantiles of Student's t for df = 1..30; index 0 is df = 1.
constexpr std::array<double, 30> kStudentT95Table = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135,
    2.262157163,  2.228138852, 2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546, 2.119905299,
    2.109815578,  2.100922040, 2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
    2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
};

// Cornish-Fisher expansion of the t quantile around the normal one (Abramowitz & Stegun
// 26.7.5); with df > 30 the truncation error is far below 1e-5.
double cornish_fisher_t(double z, double df) {
  const double z2 = z * z;
  const double g1 = z * (z2 + 1.0) / 4.0;
  const double g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
  const double g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
  const double g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

// Shortest natural form ("99.9", "101") rather than std::to_string's "99.900000".
std::string format_percentile(double p) {
  std::ostringstream out;
  out << p;
  return out.str();
}

void validate_percentile(double p) {
  if (!(p > 0.0 && p <= 100.0)) {  // also rejects NaN
    throw std::invalid_argument("percentile " + format_percentile(p) + " is outside (0, 100]");
  }
}

double mean_of(std::span<const double> samples) {
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

// Two-pass formula: subtracting the mean first avoids the cancellation of sum(x^2) - n*mean^2.
double sample_stddev(std::span<const double> samples, double mean) {
  if (samples.size() < 2) return 0.0;
  double squares = 0.0;
  for (double x : samples) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(samples.size() - 1));
}

Interval mean_interval(double mean, double stddev, std::size_t n) {
  if (n < 2) return {mean, mean};
  const double half_width = student_t95(n - 1) * stddev / std::sqrt(static_cast<double>(n));
  return {mean - half_width, mean + half_width};
}

// 1-based nearest rank of percentile p among n values.
std::size_t nearest_rank_index(std::size_t n, double p) {
  // p is a decimal like 99.9 that a double cannot hold exactly, so p * n / 100 may land a few
  // ulps above an integer rank; shrinking it by a relative 1e-12 keeps ceil() on that rank.
  const double raw_rank = p * static_cast<double>(n) / 100.0;
  const double rank = std::ceil(raw_rank - raw_rank * 1e-12);
  return static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(n)));
}

// Order-statistic interval [x_(l), x_(u)] that holds the true quantile with ~95% probability.
std::optional<Interval> percentile_interval(std::size_t count, const RankedValue& value_at_rank, double p) {
  const double n = static_cast<double>(count);
  const double q = p / 100.0;
  // Normal approx. of Binomial(n, q): l = floor(nq - 1.96 sd), u = ceil(nq + 1.96 sd) + 1.
  const double spread = kZ95 * std::sqrt(n * q * (1.0 - q));  // 1.96 sd, sd = sqrt(nq(1-q))
  const double lower_rank = std::floor(n * q - spread);
  const double upper_rank = std::ceil(n * q + spread) + 1.0;
  if (lower_rank < 1.0 || upper_rank > n) return std::nullopt;
  return Interval{value_at_rank(static_cast<std::size_t>(lower_rank)), value_at_rank(static_cast<std::size_t>(upper_rank))};
}

}  // namespace

const PercentileEstimate& LatencySummary::at(double p) const {
  const auto found =
      std::find_if(percentiles.begin(), percentiles.end(), [p](const PercentileEstimate& e) { return e.percentile == p; });
  if (found == percentiles.end()) {
    throw std::out_of_range("percentile " + format_percentile(p) + " was not requested");
  }
  return *found;
}

const std::vector<double>& default_percentiles() {
  static const std::vector<double> percentiles = {50.0, 90.0, 95.0, 99.0, 99.9};
  return percentiles;
}

LatencySummary summarize(std::span<const double> samples, const std::vector<double>& percentiles) {
  if (samples.empty()) throw std::invalid_argument("no samples to summarise");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double mean = mean_of(sorted);
  return summarize_ranked(
      sorted.size(), [&](std::size_t rank) { return sorted[rank - 1]; }, mean, sample_stddev(sorted, mean), percentiles);
}

LatencySummary summarize_ranked(std::size_t count, const RankedValue& value_at_rank, double mean, double stddev,
                                const std::vector<double>& percentiles) {
  if (count == 0) throw std::invalid_argument("no samples to summarise");
  std::for_each(percentiles.begin(), percentiles.end(), validate_percentile);
  LatencySummary summary;
  summary.count = count;
  summary.mean = mean;
  summary.stddev = stddev;
  summary.min = value_at_rank(1);
  summary.max = value_at_rank(count);
  summary.mean_ci95 = mean_interval(mean, stddev, count);
  summary.percentiles.reserve(percentiles.size());
  for (double p : percentiles)
    summary.percentiles.push_back({p, value_at_rank(nearest_rank_index(count, p)), percentile_interval(count, value_at_rank, p)});
  return summary;
}

double nearest_rank(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("no samples to summarise");
  return sorted[nearest_rank_index(sorted.size(), p) - 1];
}

double student_t95(std::size_t degrees_of_freedom) {
  if (degrees_of_freedom == 0) throw std::invalid_argument("student_t95 needs df >= 1");
  if (degrees_of_freedom <= kStudentT95Table.size()) {
    return kStudentT95Table[degrees_of_freedom - 1];
  }
  return cornish_fisher_t(kZ95, static_cast<double>(degrees_of_freedom));
}

}  // namespace infermark::stats

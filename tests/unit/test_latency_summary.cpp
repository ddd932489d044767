#include "stats/latency_summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace infermark::stats {
namespace {

// Latency-like (right-skewed) samples; a fixed seed keeps the tests deterministic.
std::vector<double> lognormal_samples(std::size_t n, std::uint64_t seed = 42) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> latency_ms(1.0, 0.5);
  std::vector<double> samples(n);
  for (double& x : samples) x = latency_ms(rng);
  return samples;
}

std::vector<double> one_to(std::size_t n) {
  std::vector<double> samples(n);
  std::iota(samples.begin(), samples.end(), 1.0);
  return samples;
}

// Reference percentile straight from the definition, in exact integer arithmetic: the smallest
// sorted value with at least p% of the sample at or below it (p given in tenths of a percent).
double reference_percentile(std::vector<double> samples, long p_tenths) {
  std::sort(samples.begin(), samples.end());
  const long n = static_cast<long>(samples.size());
  for (long count = 1; count <= n; ++count) {
    if (count * 1000 >= p_tenths * n) return samples[static_cast<std::size_t>(count - 1)];
  }
  return samples.back();
}

double ci_width(const Interval& ci) { return ci.high - ci.low; }

TEST(LatencySummary, PercentilesMatchExactNearestRank) {
  for (std::size_t n : {1UL, 2UL, 7UL, 100UL, 999UL, 1000UL, 10007UL}) {
    const auto samples = lognormal_samples(n, n);
    const auto summary = summarize(samples);
    ASSERT_EQ(summary.percentiles.size(), default_percentiles().size());
    for (const auto& estimate : summary.percentiles) {
      const long p_tenths = std::lround(estimate.percentile * 10.0);
      EXPECT_EQ(estimate.value, reference_percentile(samples, p_tenths)) << "n=" << n << " p=" << estimate.percentile;
    }
  }
}

TEST(LatencySummary, PercentilesAreReportedInRequestedOrder) {
  const auto summary = summarize(one_to(10), {99.0, 10.0, 50.0});
  ASSERT_EQ(summary.percentiles.size(), 3U);
  EXPECT_EQ(summary.percentiles[0].percentile, 99.0);
  EXPECT_EQ(summary.percentiles[1].percentile, 10.0);
  EXPECT_EQ(summary.percentiles[2].percentile, 50.0);
  EXPECT_EQ(summary.at(10.0).value, 1.0);
  EXPECT_EQ(summary.at(50.0).value, 5.0);
  EXPECT_EQ(summary.at(99.0).value, 10.0);
}

TEST(LatencySummary, NearestRankEdgeCases) {
  const auto sorted = one_to(10);
  EXPECT_EQ(nearest_rank(sorted, 0.1), 1.0);   // rank clamps up to 1
  EXPECT_EQ(nearest_rank(sorted, 90.0), 9.0);  // exactly 90% at or below 9
  EXPECT_EQ(nearest_rank(sorted, 90.1), 10.0);
  EXPECT_EQ(nearest_rank(sorted, 100.0), 10.0);
}

TEST(LatencySummary, MomentsOfHandComputedExample) {
  // Mean 5; squared deviations sum to 32, so the sample variance is 32 / 7.
  const std::vector<double> samples = {4, 2, 5, 4, 9, 4, 7, 5};
  const auto summary = summarize(samples);
  EXPECT_EQ(summary.count, 8U);
  EXPECT_DOUBLE_EQ(summary.mean, 5.0);
  EXPECT_DOUBLE_EQ(summary.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_EQ(summary.min, 2.0);
  EXPECT_EQ(summary.max, 9.0);
  const double half_width = student_t95(7) * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);
  EXPECT_NEAR(summary.mean_ci95.low, 5.0 - half_width, 1e-12);
  EXPECT_NEAR(summary.mean_ci95.high, 5.0 + half_width, 1e-12);
}

TEST(LatencySummary, SingleSampleHasZeroSpreadAndPointInterval) {
  const auto summary = summarize(std::vector<double>{3.5});
  EXPECT_EQ(summary.mean, 3.5);
  EXPECT_EQ(summary.stddev, 0.0);
  EXPECT_EQ(summary.mean_ci95.low, 3.5);
  EXPECT_EQ(summary.mean_ci95.high, 3.5);
}

TEST(LatencySummary, MeanIntervalContainsMeanAndNarrowsWithMoreSamples) {
  double previous_width = INFINITY;
  for (std::size_t n : {10UL, 100UL, 1000UL, 10000UL}) {
    const auto summary = summarize(lognormal_samples(n));
    EXPECT_LE(summary.mean_ci95.low, summary.mean) << "n=" << n;
    EXPECT_GE(summary.mean_ci95.high, summary.mean) << "n=" << n;
    EXPECT_LT(ci_width(summary.mean_ci95), previous_width) << "n=" << n;
    previous_width = ci_width(summary.mean_ci95);
  }
}

TEST(StudentT95, MatchesKnownQuantiles) {
  EXPECT_NEAR(student_t95(1), 12.706, 1e-3);
  EXPECT_NEAR(student_t95(10), 2.228, 1e-3);
  EXPECT_NEAR(student_t95(30), 2.042, 1e-3);
  EXPECT_NEAR(student_t95(31), 2.0395, 1e-3);  // first value past the table
  EXPECT_NEAR(student_t95(60), 2.0003, 1e-3);
  EXPECT_NEAR(student_t95(1000), 1.962, 1e-3);
  EXPECT_NEAR(student_t95(1000000), 1.95996, 1e-4);
}

TEST(StudentT95, DecreasesTowardsNormalQuantile) {
  for (std::size_t df = 1; df < 200; ++df) {
    EXPECT_GT(student_t95(df), student_t95(df + 1)) << "df=" << df;
  }
}

TEST(PercentileInterval, BracketsThePointEstimate) {
  const auto summary = summarize(lognormal_samples(1000));
  for (const auto& estimate : summary.percentiles) {
    if (!estimate.ci95) continue;
    EXPECT_LE(estimate.ci95->low, estimate.value) << "p=" << estimate.percentile;
    EXPECT_GE(estimate.ci95->high, estimate.value) << "p=" << estimate.percentile;
  }
  EXPECT_TRUE(summary.at(99.0).ci95.has_value());
}

TEST(PercentileInterval, DependsOnSampleSizeAtTheTail) {
  const auto summary = summarize(one_to(100));
  EXPECT_FALSE(summary.at(99.9).ci95.has_value());
  EXPECT_FALSE(summary.at(99.0).ci95.has_value());
  ASSERT_TRUE(summary.at(50.0).ci95.has_value());
  // n q = 50, 1.96 sqrt(n q (1 - q)) = 9.8: ranks floor(40.2) = 40 and ceil(59.8) + 1 = 61.
  EXPECT_EQ(summary.at(50.0).ci95->low, 40.0);
  EXPECT_EQ(summary.at(50.0).ci95->high, 61.0);
}

TEST(LatencySummary, RejectsEmptySample) { EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument); }

TEST(LatencySummary, RejectsPercentilesOutsideRange) {
  const auto samples = one_to(10);
  EXPECT_THROW(summarize(samples, {0.0}), std::invalid_argument);
  EXPECT_THROW(summarize(samples, {101.0}), std::invalid_argument);
  EXPECT_THROW(summarize(samples, {-5.0}), std::invalid_argument);
  EXPECT_THROW(summarize(samples, {NAN}), std::invalid_argument);
  try {
    summarize(samples, {50.0, 101.0});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()), "percentile 101 is outside (0, 100]");
  }
}

TEST(LatencySummary, AtThrowsForPercentileNotRequested) {
  const auto summary = summarize(one_to(10), {50.0, 99.0});
  EXPECT_NO_THROW(summary.at(99.0));
  EXPECT_THROW(summary.at(90.0), std::out_of_range);
}

TEST(LatencySummary, DefaultPercentiles) {
  EXPECT_EQ(default_percentiles(), (std::vector<double>{50.0, 90.0, 95.0, 99.0, 99.9}));
}

}  // namespace
}  // namespace infermark::stats

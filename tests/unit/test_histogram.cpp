#include "stats/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace infermark::stats {
namespace {

using nlohmann::json;
using Samples = std::vector<std::int64_t>;

constexpr std::int64_t kHour = 3'600'000'000'000;  // the default highest_trackable, in ns
const std::vector<double> kPercentiles = {0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};

// Fixed seeds keep every test deterministic.
Samples uniform_samples(std::size_t n, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> ns(0, 1'000'000'000);
  Samples samples(n);
  for (auto& x : samples) x = ns(rng);
  return samples;
}

// Latency-like: right-skewed around 1 ms.
Samples lognormal_samples(std::size_t n, std::uint64_t seed = 2) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> ns(std::log(1e6), 1.0);
  Samples samples(n);
  for (auto& x : samples) x = static_cast<std::int64_t>(ns(rng));
  return samples;
}

// Mostly ~1 ms with 1% stalls of seconds to tens of minutes (still below an hour).
Samples samples_with_outliers(std::size_t n, std::uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> normal(900'000, 1'100'000);
  std::uniform_int_distribution<std::int64_t> stall(1'000'000'000, 3'000'000'000'000);
  std::bernoulli_distribution is_outlier(0.01);
  Samples samples(n);
  for (auto& x : samples) x = is_outlier(rng) ? stall(rng) : normal(rng);
  return samples;
}

LatencyHistogram histogram_of(const Samples& samples) {
  LatencyHistogram h;
  for (auto x : samples) h.record(x);
  return h;
}

// Exact nearest rank: the smallest value with at least p% of the sample at or below it.
std::int64_t exact_percentile(Samples sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * n - 1e-9)));
  return sorted[rank - 1];
}

void expect_percentiles_within_precision(const Samples& samples) {
  const LatencyHistogram h = histogram_of(samples);
  for (double p : kPercentiles) {
    SCOPED_TRACE(::testing::Message() << "P" << p);
    const std::int64_t exact = exact_percentile(samples, p);
    const std::int64_t reported = h.value_at_percentile(p);
    EXPECT_GE(reported, exact);  // a bucket's top edge: never optimistic
    EXPECT_LE(static_cast<double>(reported - exact), h.relative_precision() * static_cast<double>(exact));
  }
}

// ------------------------------ LatencyHistogram ------------------------------------------

TEST(LatencyHistogram, PercentilesMatchExactNearestRankWithinPrecision) {
  for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{100'000}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    {
      SCOPED_TRACE("uniform");
      expect_percentiles_within_precision(uniform_samples(n));
    }
    {
      SCOPED_TRACE("log-normal");
      expect_percentiles_within_precision(lognormal_samples(n));
    }
    {
      SCOPED_TRACE("outliers");
      expect_percentiles_within_precision(samples_with_outliers(n));
    }
  }
}

TEST(LatencyHistogram, ValueAtRankFollowsSortedOrder) {
  Samples samples = lognormal_samples(500);
  const LatencyHistogram h = histogram_of(samples);
  std::sort(samples.begin(), samples.end());
  for (std::size_t rank = 1; rank <= samples.size(); ++rank) {
    const auto exact = static_cast<double>(samples[rank - 1]);
    EXPECT_NEAR(static_cast<double>(h.value_at_rank(rank)), exact, h.relative_precision() * exact);
  }
  EXPECT_EQ(h.value_at_rank(0), h.min());  // ranks are clamped into [1, count]
  EXPECT_EQ(h.value_at_rank(10'000), h.max());
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.value_at_percentile(50), 50);
  EXPECT_EQ(h.value_at_percentile(99), 99);
  EXPECT_EQ(h.value_at_percentile(99.9), 100);  // rank ceil(99.9) = 100, not thrown off by rounding
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(LatencyHistogram, PercentileRankToleratesFloatingError) {
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 1000; ++v) h.record(v * 1000);
  // 99.9 / 100 * 1000 is 999.0000000000001 in doubles; the rank must still be 999.
  const std::int64_t p999 = h.value_at_percentile(99.9);
  EXPECT_GE(p999, 999'000);
  EXPECT_LE(static_cast<double>(p999), 999'000 * (1 + h.relative_precision()));
  EXPECT_LT(p999, 1'000'000);
}

TEST(LatencyHistogram, MinAndMaxAreExact) {
  const Samples samples = lognormal_samples(10'000);
  const LatencyHistogram h = histogram_of(samples);
  EXPECT_EQ(h.min(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.max(), *std::max_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.value_at_percentile(100), h.max());
  EXPECT_EQ(h.value_at_rank(1), h.min());
}

TEST(LatencyHistogram, MeanAndStddevWithinPrecision) {
  const Samples samples = lognormal_samples(100'000);
  const LatencyHistogram h = histogram_of(samples);
  double mean = 0.0;
  for (auto x : samples) mean += static_cast<double>(x);
  mean /= static_cast<double>(samples.size());
  double squares = 0.0;
  for (auto x : samples) squares += std::pow(static_cast<double>(x) - mean, 2);
  const double stddev = std::sqrt(squares / static_cast<double>(samples.size()));
  EXPECT_NEAR(h.mean(), mean, h.relative_precision() * mean);
  EXPECT_NEAR(h.stddev(), stddev, 2 * h.relative_precision() * stddev);

  LatencyHistogram constant;
  constant.record_n(123'456'789, 10);
  EXPECT_DOUBLE_EQ(constant.stddev(), 0.0);
}

TEST(LatencyHistogram, EmptyHistogramReportsZeros) {
  const LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.stddev(), 0.0);
  EXPECT_EQ(h.value_at_percentile(99), 0);
  EXPECT_EQ(h.value_at_rank(1), 0);
}

TEST(LatencyHistogram, CountsAndSaturation) {
  LatencyHistogram h(2, 1'000'000);
  h.record(10);
  h.record_n(500, 3);
  h.record_n(700, 0);  // recording nothing changes nothing
  h.record(5'000'000);
  h.record(1'000'000);  // the highest trackable value itself is not saturated
  EXPECT_EQ(h.count(), 6u);
  EXPECT_EQ(h.saturated(), 1u);
  EXPECT_EQ(h.max(), 1'000'000);  // clamped to highest_trackable
  EXPECT_EQ(h.min(), 10);
  EXPECT_EQ(h.value_at_percentile(100), 1'000'000);
}

TEST(LatencyHistogram, NegativeValuesCountAsZero) {
  LatencyHistogram h;
  h.record(-5);
  h.record(7);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.value_at_percentile(50), 0);
  EXPECT_EQ(h.max(), 7);
}

TEST(LatencyHistogram, RelativePrecisionFollowsSignificantDigits) {
  EXPECT_DOUBLE_EQ(LatencyHistogram(1).relative_precision(), 1.0 / 16);
  EXPECT_DOUBLE_EQ(LatencyHistogram(2).relative_precision(), 1.0 / 128);
  EXPECT_DOUBLE_EQ(LatencyHistogram(3).relative_precision(), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(LatencyHistogram(4).relative_precision(), 1.0 / 16384);
}

TEST(LatencyHistogram, RejectsBadSettingsAndPercentiles) {
  EXPECT_THROW(LatencyHistogram(0), std::invalid_argument);
  EXPECT_THROW(LatencyHistogram(5), std::invalid_argument);
  EXPECT_THROW(LatencyHistogram(2, 1), std::invalid_argument);
  const LatencyHistogram h;
  EXPECT_THROW(h.value_at_percentile(-1), std::invalid_argument);
  EXPECT_THROW(h.value_at_percentile(100.5), std::invalid_argument);
  EXPECT_THROW(h.value_at_percentile(std::nan("")), std::invalid_argument);
}

TEST(LatencyHistogram, TracksTheWholeInt64Range) {
  LatencyHistogram h(3, INT64_MAX);
  h.record(INT64_MAX);
  h.record(1);
  EXPECT_EQ(h.saturated(), 0u);
  EXPECT_EQ(h.value_at_percentile(100), INT64_MAX);
  EXPECT_EQ(LatencyHistogram::from_json(h.to_json()).to_json(), h.to_json());
}

TEST(LatencyHistogram, MergeEqualsHistogramOfUnion) {
  const Samples a = lognormal_samples(50'000, 11);
  const Samples b = samples_with_outliers(30'000, 12);
  Samples all = a;
  all.insert(all.end(), b.begin(), b.end());

  LatencyHistogram merged = histogram_of(a);
  merged.merge(histogram_of(b));
  const LatencyHistogram expected = histogram_of(all);
  EXPECT_EQ(merged.to_json(), expected.to_json());  // bucket-exact
  for (double p : kPercentiles) {
    EXPECT_EQ(merged.value_at_percentile(p), expected.value_at_percentile(p));
  }
  EXPECT_EQ(merged.mean(), expected.mean());
}

TEST(LatencyHistogram, MergeWithEmptyKeepsExtremes) {
  LatencyHistogram h = histogram_of({5, 9});
  h.merge(LatencyHistogram());
  EXPECT_EQ(h.min(), 5);
  EXPECT_EQ(h.max(), 9);
  LatencyHistogram empty;
  empty.merge(h);
  EXPECT_EQ(empty.to_json(), h.to_json());
}

TEST(LatencyHistogram, MergeRejectsDifferentSettings) {
  LatencyHistogram h(2);
  EXPECT_THROW(h.merge(LatencyHistogram(3)), std::invalid_argument);
  EXPECT_THROW(h.merge(LatencyHistogram(2, 1'000)), std::invalid_argument);
}

TEST(LatencyHistogram, ResetEmptiesEverything) {
  LatencyHistogram h = histogram_of(uniform_samples(100));
  h.reset();
  EXPECT_EQ(h.to_json(), LatencyHistogram().to_json());
}

TEST(LatencyHistogram, ManyRecordsAndCopiesAgree) {
  // record() must stay cheap and allocation-free; here we only check a million records land.
  LatencyHistogram h;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> ns(0, kHour);
  for (int i = 0; i < 1'000'000; ++i) h.record(ns(rng));
  EXPECT_EQ(h.count(), 1'000'000u);
  const LatencyHistogram copy = h;
  EXPECT_EQ(copy.to_json(), h.to_json());
}

TEST(LatencyHistogram, JsonRoundTrip) {
  LatencyHistogram h(3, 4'000'000'000'000);
  for (auto x : samples_with_outliers(10'000)) h.record(x);
  h.record(5'000'000'000'000);  // saturated
  const json j = h.to_json();
  EXPECT_EQ(j.at("significant_digits"), 3);
  EXPECT_EQ(j.at("count"), 10'001u);
  EXPECT_EQ(j.at("saturated"), 1u);
  EXPECT_TRUE(j.at("buckets").is_array());

  const LatencyHistogram back = LatencyHistogram::from_json(json::parse(j.dump()));
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.min(), h.min());
  EXPECT_EQ(back.max(), h.max());
  EXPECT_EQ(back.value_at_percentile(99), h.value_at_percentile(99));
  EXPECT_EQ(LatencyHistogram::from_json(LatencyHistogram().to_json()).count(), 0u);
}

TEST(LatencyHistogram, FromJsonRejectsBadInput) {
  const json good = histogram_of({1'000, 2'000, 3'000'000}).to_json();
  ASSERT_NO_THROW(LatencyHistogram::from_json(good));
  const auto rejects = [](const json& j) { EXPECT_THROW(LatencyHistogram::from_json(j), std::invalid_argument) << j.dump(); };
  const auto with = [&](const char* key, const json& value) {
    json j = good;
    j[key] = value;
    return j;
  };
  rejects(json::array());
  rejects(json::parse("\"histogram\""));
  json missing = good;
  missing.erase("buckets");
  rejects(missing);
  rejects(with("significant_digits", 5));
  rejects(with("significant_digits", 4294967298LL));  // would wrap to 2 as an int
  rejects(with("highest_trackable", "an hour"));
  rejects(with("count", -3));
  rejects(with("count", 4));        // buckets add up to 3
  rejects(with("min", 5'000'000));  // min > max
  rejects(with("min", 1'500));      // not in the lowest bucket
  rejects(with("max", 2'500'000));  // not in the highest bucket
  rejects(with("saturated", 1));    // max is not highest_trackable
  rejects(with("buckets", json::object()));
  rejects(with("buckets", json::array({json::array({1})})));
  rejects(with("buckets", json::array({json::array({1'000'000'000, 3})})));  // index out of range
  json duplicate = good;
  duplicate["buckets"].push_back(duplicate["buckets"][0]);
  duplicate["count"] = 4;
  rejects(duplicate);
}

// ------------------------------ IntervalSeries --------------------------------------------

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(IntervalSeries, CountsAndThroughputPerInterval) {
  IntervalSeries series(kSecond, 10 * kSecond);
  series.record(kSecond / 2, 2'000'000);
  series.record(kSecond + 1, 4'000'000);
  series.record(2 * kSecond - 1, 6'000'000);
  series.record_error(2 * kSecond + 5);
  EXPECT_EQ(series.used_intervals(), 3u);
  EXPECT_EQ(series.interval(0).completed, 1u);
  EXPECT_EQ(series.interval(1).completed, 2u);
  EXPECT_EQ(series.interval(1).start_ns, kSecond);
  EXPECT_EQ(series.interval(1).latency.max(), 6'000'000);
  EXPECT_EQ(series.interval(2).completed, 0u);
  EXPECT_EQ(series.interval(2).errors, 1u);

  const json rows = series.to_json();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[1].at("t_s").get<double>(), 1.0);
  EXPECT_EQ(rows[1].at("completed"), 2u);
  EXPECT_DOUBLE_EQ(rows[1].at("throughput_per_s").get<double>(), 2.0);
  EXPECT_NEAR(rows[1].at("p50_ms").get<double>(), 4.0, 4.0 / 128);
  EXPECT_DOUBLE_EQ(rows[1].at("max_ms").get<double>(), 6.0);
  EXPECT_EQ(rows[2].at("errors"), 1u);
  EXPECT_DOUBLE_EQ(rows[2].at("throughput_per_s").get<double>(), 0.0);
  EXPECT_TRUE(rows[2].at("p50_ms").is_null());
  EXPECT_TRUE(rows[2].at("p99_ms").is_null());
  EXPECT_TRUE(rows[2].at("max_ms").is_null());
}

TEST(IntervalSeries, ThroughputScalesWithIntervalLength) {
  IntervalSeries series(kSecond / 10, kSecond);
  for (int i = 0; i < 5; ++i) series.record(0, 1'000);
  EXPECT_DOUBLE_EQ(series.to_json()[0].at("throughput_per_s").get<double>(), 50.0);
}

TEST(IntervalSeries, LateAndEarlyTimesAreClampedToTheEnds) {
  IntervalSeries series(kSecond, 10 * kSecond);  // 11 intervals: the last takes overruns
  series.record(100 * kSecond, 1'000);
  series.record(10 * kSecond, 1'000);
  series.record(-5, 1'000);
  EXPECT_EQ(series.used_intervals(), 11u);
  EXPECT_EQ(series.interval(10).completed, 2u);
  EXPECT_EQ(series.interval(0).completed, 1u);
  EXPECT_THROW(series.interval(11), std::out_of_range);

  IntervalSeries uneven(kSecond, kSecond + 1);  // ceil(1.000000001) + 1 = 3 intervals
  uneven.record_error(INT64_MAX);
  EXPECT_EQ(uneven.used_intervals(), 3u);
}

TEST(IntervalSeries, MergedEqualsHistogramOfEverything) {
  const Samples latencies = lognormal_samples(5'000);
  IntervalSeries series(kSecond, 60 * kSecond);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> at(0, 70 * kSecond);
  for (auto latency : latencies) series.record(at(rng), latency);
  EXPECT_EQ(series.merged().to_json(), histogram_of(latencies).to_json());
}

TEST(IntervalSeries, EmptySeries) {
  const IntervalSeries series(kSecond, 0);
  EXPECT_EQ(series.used_intervals(), 0u);
  EXPECT_EQ(series.to_json(), json::array());
  EXPECT_EQ(series.merged().count(), 0u);
}

TEST(IntervalSeries, ConstructorRejectsBadArguments) {
  EXPECT_THROW(IntervalSeries(0, kSecond), std::invalid_argument);
  EXPECT_THROW(IntervalSeries(-1, kSecond), std::invalid_argument);
  EXPECT_THROW(IntervalSeries(kSecond, -1), std::invalid_argument);
  EXPECT_THROW(IntervalSeries(kSecond, 10 * kSecond, 7), std::invalid_argument);
  try {
    const IntervalSeries too_long(1, 100'000);  // 100001 intervals: one too many
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("longer interval"), std::string::npos) << e.what();
  }
}

// ------------------------------ Early stopping --------------------------------------------

// P(Binomial(n, t) <= k) by direct summation, independent of the implementation's method.
double naive_binomial_cdf(int n, int k, double t) {
  double cdf = 0.0;
  for (int i = 0; i <= k; ++i) {
    const double log_choose = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0);
    cdf += std::exp(log_choose + i * std::log(t) + (n - i) * std::log1p(-t));
  }
  return cdf;
}

TEST(EarlyStopping, MinQueriesForPercentile) {
  EXPECT_EQ(min_queries_for_percentile(99, 0.99), 459u);
  EXPECT_EQ(min_queries_for_percentile(90, 0.99), 44u);
  EXPECT_GE(claimable_percentile(459, 0), 99.0);
  EXPECT_LT(claimable_percentile(458, 0), 99.0);
  EXPECT_GE(claimable_percentile(44, 0), 90.0);
  EXPECT_LT(claimable_percentile(43, 0), 90.0);
}

TEST(EarlyStopping, MinQueriesAgreesWithClaimablePercentile) {
  for (double confidence : {0.9, 0.95, 0.99}) {
    for (double p : {50.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
      SCOPED_TRACE(::testing::Message() << "P" << p << " at " << confidence);
      const std::uint64_t n = min_queries_for_percentile(p, confidence);
      EXPECT_GE(claimable_percentile(n, 0, confidence), p);
      EXPECT_LT(claimable_percentile(n - 1, 0, confidence), p);
    }
  }
}

TEST(EarlyStopping, ClaimableIsMonotone) {
  for (std::uint64_t k : {0u, 1u, 5u}) {
    double previous = 0.0;
    for (std::uint64_t n = 1; n <= 3'000; n += 7) {
      const double q = claimable_percentile(n, k);
      EXPECT_GE(q, previous) << "n = " << n << ", k = " << k;
      previous = q;
    }
  }
  double previous = 100.0;
  for (std::uint64_t k = 0; k <= 50; ++k) {
    const double q = claimable_percentile(5'000, k);
    EXPECT_LT(q, previous) << "k = " << k;
    previous = q;
  }
}

TEST(EarlyStopping, ClaimableIsTheBinomialBoundary) {
  const int n = 1'000;
  const int k = 7;
  const double q = claimable_percentile(n, k) / 100.0;
  EXPECT_LE(naive_binomial_cdf(n, k, 1.0 - q), 0.01);
  EXPECT_GT(naive_binomial_cdf(n, k, 1.0 - (q + 1e-6)), 0.01);
}

TEST(EarlyStopping, EdgeCases) {
  EXPECT_EQ(claimable_percentile(0, 0), 0.0);
  EXPECT_EQ(claimable_percentile(10, 10), 0.0);  // everything over target
  EXPECT_EQ(claimable_percentile(10, 20), 0.0);
  EXPECT_THROW(claimable_percentile(100, 0, 1.0), std::invalid_argument);
  EXPECT_THROW(claimable_percentile(100, 0, 0.0), std::invalid_argument);
  EXPECT_THROW(min_queries_for_percentile(100, 0.99), std::invalid_argument);
  EXPECT_THROW(min_queries_for_percentile(0, 0.99), std::invalid_argument);
  EXPECT_THROW(min_queries_for_percentile(99, 1.5), std::invalid_argument);
}

TEST(EarlyStopping, HandlesHundredsOfMillionsOfQueries) {
  // 1% over target out of 1e8: the claim sits a few standard errors below P99.
  const double q = claimable_percentile(100'000'000, 1'000'000);
  EXPECT_GT(q, 98.99);
  EXPECT_LT(q, 99.0);
  EXPECT_GT(claimable_percentile(100'000'000, 0), 99.9999);
}

TEST(EarlyStopping, SamplesAllowedAboveTheEstimateMatchTheClaimableBound) {
  EXPECT_FALSE(samples_allowed_above(458, 99).has_value());  // too short for any P99 claim
  EXPECT_EQ(samples_allowed_above(459, 99), 0u);
  for (const std::uint64_t n : {459ull, 1000ull, 10000ull}) {
    const auto t = *samples_allowed_above(n, 99);
    EXPECT_GE(claimable_percentile(n, t), 99.0) << n;
    EXPECT_LT(claimable_percentile(n, t + 1), 99.0) << n;
  }
  // Binomial(10000, 0.01): mean 100, sd 9.95; 2.33 sd below the mean at 99% confidence.
  EXPECT_NEAR(static_cast<double>(*samples_allowed_above(10000, 99)), 76.0, 2.0);
}

TEST(EarlyStopping, TheEstimateIsAnOrderStatisticAtOrAboveThePercentile) {
  std::vector<double> samples;
  for (int i = 1000; i >= 1; --i) samples.push_back(i);  // 1..1000 ms, in any order
  const auto t = *samples_allowed_above(1000, 90);
  const auto estimate = early_stopping_estimate(samples, 90);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_EQ(*estimate, static_cast<double>(1000 - t));
  EXPECT_GE(*estimate, 900.0);  // never below the plain P90
  EXPECT_LT(*estimate, 950.0);
  EXPECT_FALSE(early_stopping_estimate(std::vector<double>(43, 1.0), 90).has_value());  // 44 needed
}

}  // namespace
}  // namespace infermark::stats

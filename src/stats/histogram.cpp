#include "stats/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace infermark::stats {
namespace {

using nlohmann::json;

constexpr int kMinSignificantDigits = 1;
constexpr int kMaxSignificantDigits = 4;
// With a lowest discernible value of 1, a range needs at least one doubling above it.
constexpr std::int64_t kMinHighestTrackable = 2;
// Every interval owns a full histogram, so their number bounds the series' memory.
constexpr std::uint64_t kMaxIntervals = 100'000;
// Relative slack for ceil() on products such as 99.9 / 100 * 1000 = 999.0000000000001.
constexpr double kCeilSlack = 1e-12;
// Width of the final bisection bracket on q; finer than the 1e-6 a report prints, so that
// claims right at min_queries_for_percentile()'s boundary (e.g. P99.9 at 4603) still hold.
constexpr double kQuantileTolerance = 1e-12;
// Binomial terms this far below the running sum no longer change a double.
constexpr double kNegligibleTerm = 1e-17;

// ceil(x) that forgives the rounding error of the floating product that produced x.
double tolerant_ceil(double x) { return std::ceil(x - std::abs(x) * kCeilSlack); }

void validate_settings(std::int64_t significant_digits, std::int64_t highest_trackable) {
  if (significant_digits < kMinSignificantDigits || significant_digits > kMaxSignificantDigits) {
    throw std::invalid_argument("histogram significant_digits must be in [1, 4], got " + std::to_string(significant_digits));
  }
  if (highest_trackable < kMinHighestTrackable) {
    throw std::invalid_argument("histogram highest_trackable must be at least 2, got " + std::to_string(highest_trackable));
  }
}

// Sub-buckets per bucket as a power of two: enough that every value below 2 * 10^digits is
// its own sub-bucket, which keeps the relative error under 10^-digits everywhere.
int sub_bucket_count_magnitude(int significant_digits) {
  std::uint64_t largest_single_unit_value = 2;
  for (int d = 0; d < significant_digits; ++d) largest_single_unit_value *= 10;
  return std::bit_width(largest_single_unit_value - 1);  // ceil(log2(...))
}

// Bucket 0 covers [0, sub_bucket_count); each further bucket doubles the covered range.
int bucket_count_for(std::int64_t highest_trackable, std::int64_t sub_bucket_count) {
  int buckets = 1;
  // Unsigned, so the last doubling past INT64_MAX cannot overflow.
  for (auto untrackable = static_cast<std::uint64_t>(sub_bucket_count);
       untrackable <= static_cast<std::uint64_t>(highest_trackable); untrackable <<= 1) {
    ++buckets;
  }
  return buckets;
}

struct BucketPosition {
  int bucket = 0;               // values in it are multiples of 2^bucket
  std::int64_t sub_bucket = 0;  // value / 2^bucket
};

// Inverse of LatencyHistogram::index_of: the first half of bucket 0 is stored once, and each
// bucket then only adds its upper half (the lower half duplicates the previous bucket).
BucketPosition position_of(std::size_t index, int sub_bucket_half_count_magnitude) {
  const std::int64_t half_count = std::int64_t{1} << sub_bucket_half_count_magnitude;
  BucketPosition pos;
  pos.bucket = static_cast<int>(index >> sub_bucket_half_count_magnitude) - 1;
  pos.sub_bucket = static_cast<std::int64_t>(index & static_cast<std::size_t>(half_count - 1)) + half_count;
  if (pos.bucket < 0) {
    pos.sub_bucket -= half_count;
    pos.bucket = 0;
  }
  return pos;
}

// HdrHistogram's "median equivalent": the middle of the values sharing a bucket.
double midpoint(std::int64_t lowest, std::int64_t highest) { return static_cast<double>(lowest + (highest - lowest + 1) / 2); }

template <typename Visit>
void for_each_nonzero(const std::vector<std::uint64_t>& counts, Visit visit) {
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) visit(i, counts[i]);
  }
}

// --- JSON field access with messages that name the field -----------------------------------

const json& field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) {
    throw std::invalid_argument(std::string("histogram json: missing field \"") + name + "\"");
  }
  return *it;
}

std::int64_t as_int64(const json& value, const std::string& what) {
  const bool fits = value.is_number_integer() &&
                    (!value.is_number_unsigned() ||
                     value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  if (!fits) throw std::invalid_argument("histogram json: " + what + " must be a 64-bit integer");
  return value.get<std::int64_t>();
}

std::uint64_t as_uint64(const json& value, const std::string& what) {
  const bool fits = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
  if (!fits) {
    throw std::invalid_argument("histogram json: " + what + " must be a non-negative integer");
  }
  return value.get<std::uint64_t>();
}

std::int64_t int_field(const json& j, const char* name) { return as_int64(field(j, name), std::string("\"") + name + "\""); }

std::uint64_t uint_field(const json& j, const char* name) { return as_uint64(field(j, name), std::string("\"") + name + "\""); }

// Adds the [index, count] pairs of `buckets` into `counts`; returns the sum of the counts.
std::uint64_t load_buckets(const json& buckets, std::vector<std::uint64_t>& counts) {
  if (!buckets.is_array()) {
    throw std::invalid_argument("histogram json: \"buckets\" must be an array");
  }
  std::uint64_t total = 0;
  for (const json& entry : buckets) {
    if (!entry.is_array() || entry.size() != 2) {
      throw std::invalid_argument("histogram json: each bucket must be an [index, count] pair");
    }
    const std::uint64_t index = as_uint64(entry[0], "bucket index");
    const std::uint64_t count = as_uint64(entry[1], "bucket count");
    if (index >= counts.size()) {
      throw std::invalid_argument("histogram json: bucket index " + std::to_string(index) +
                                  " is out of range (the settings give " + std::to_string(counts.size()) + " buckets)");
    }
    if (counts[index] != 0) {
      throw std::invalid_argument("histogram json: bucket index " + std::to_string(index) + " is listed twice");
    }
    if (count > std::numeric_limits<std::uint64_t>::max() - total) {
      throw std::invalid_argument("histogram json: bucket counts overflow");
    }
    counts[index] = count;
    total += count;
  }
  return total;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("histogram json: " + message);
}

// The interval holding `at_ns`, with early (negative) and late times pulled to the ends.
std::size_t interval_index(std::int64_t at_ns, std::int64_t interval_ns, std::size_t count) {
  const auto index = static_cast<std::uint64_t>(std::max<std::int64_t>(at_ns, 0) / interval_ns);
  return static_cast<std::size_t>(std::min<std::uint64_t>(index, count - 1));
}

// --- Binomial tail for early stopping ----------------------------------------------------

// log P(X = i) for X ~ Binomial(n, t); lgamma keeps this finite for n in the hundreds of millions.
double log_binomial_pmf(double n, double i, double log_t, double log_not_t) {
  return std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * log_t + (n - i) * log_not_t;
}

// sum_i P(X = i) / P(X = start), walking from `start` away from the mode (so every step
// shrinks the term) until the terms stop mattering. `odds` is t / (1 - t).
double relative_tail_sum(std::uint64_t n, std::uint64_t start, double odds, bool downward) {
  const double dn = static_cast<double>(n);
  double term = 1.0;
  double sum = 1.0;
  for (std::uint64_t i = start; downward ? i > 0 : i < n; downward ? --i : ++i) {
    const double di = static_cast<double>(i);
    term *= downward ? di / (dn - di + 1.0) / odds : (dn - di) / (di + 1.0) * odds;
    sum += term;
    if (term < sum * kNegligibleTerm) break;
  }
  return sum;
}

// P(X <= k) for X ~ Binomial(n, t) with 0 < t < 1. Sums whichever tail lies beyond the mode,
// so only a few standard deviations' worth of terms are ever added.
double binomial_cdf(std::uint64_t n, std::uint64_t k, double t) {
  if (k >= n) return 1.0;
  const double dn = static_cast<double>(n);
  const double log_t = std::log(t);
  const double log_not_t = std::log1p(-t);
  const double odds = t / (1.0 - t);
  const double mode = std::floor((dn + 1.0) * t);
  const double dk = static_cast<double>(k);
  if (dk < mode) {
    const double log_lower =
        log_binomial_pmf(dn, dk, log_t, log_not_t) + std::log(relative_tail_sum(n, k, odds, /*downward=*/true));
    return std::min(1.0, std::exp(log_lower));
  }
  const double log_upper =
      log_binomial_pmf(dn, dk + 1.0, log_t, log_not_t) + std::log(relative_tail_sum(n, k + 1, odds, /*downward=*/false));
  return std::clamp(-std::expm1(log_upper), 0.0, 1.0);
}

void validate_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw std::invalid_argument("confidence must be in (0, 1), got " + std::to_string(confidence));
  }
}

}  // namespace

// ============================== LatencyHistogram ============================================

LatencyHistogram::LatencyHistogram(int significant_digits, std::int64_t highest_trackable)
    : significant_digits_(significant_digits), highest_trackable_(highest_trackable) {
  validate_settings(significant_digits, highest_trackable);
  const int count_magnitude = sub_bucket_count_magnitude(significant_digits);
  sub_bucket_half_count_magnitude_ = count_magnitude - 1;
  sub_bucket_count_ = std::int64_t{1} << count_magnitude;
  sub_bucket_half_count_ = sub_bucket_count_ / 2;
  sub_bucket_mask_ = sub_bucket_count_ - 1;
  const int buckets = bucket_count_for(highest_trackable, sub_bucket_count_);
  const auto slots = static_cast<std::size_t>(buckets + 1) * static_cast<std::size_t>(sub_bucket_half_count_);
  counts_.assign(slots, 0);
}

// The bucket is fixed by the value's highest set bit (values below sub_bucket_count all land
// in bucket 0, hence the mask); the sub-bucket is the value's top bits within it.
std::size_t LatencyHistogram::index_of(std::int64_t value) const {
  const auto bits = static_cast<std::uint64_t>(value | sub_bucket_mask_);
  const int bucket = std::bit_width(bits) - (sub_bucket_half_count_magnitude_ + 1);
  const std::int64_t sub_bucket = value >> bucket;
  return (static_cast<std::size_t>(bucket + 1) << sub_bucket_half_count_magnitude_) +
         static_cast<std::size_t>(sub_bucket - sub_bucket_half_count_);
}

std::int64_t LatencyHistogram::lowest_equivalent(std::size_t index) const {
  const BucketPosition pos = position_of(index, sub_bucket_half_count_magnitude_);
  return pos.sub_bucket << pos.bucket;
}

// Written as lowest + (width - 1) so the top bucket ending at INT64_MAX does not overflow.
std::int64_t LatencyHistogram::highest_equivalent(std::size_t index) const {
  const BucketPosition pos = position_of(index, sub_bucket_half_count_magnitude_);
  return (pos.sub_bucket << pos.bucket) + ((std::int64_t{1} << pos.bucket) - 1);
}

void LatencyHistogram::record(std::int64_t value) { record_n(value, 1); }

void LatencyHistogram::record_n(std::int64_t value, std::uint64_t n) {
  if (n == 0) return;
  if (value < 0) value = 0;
  if (value > highest_trackable_) {
    value = highest_trackable_;
    saturated_ += n;
  }
  counts_[index_of(value)] += n;
  total_ += n;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (significant_digits_ != other.significant_digits_ || highest_trackable_ != other.highest_trackable_) {
    throw std::invalid_argument("cannot merge histograms with different settings (significant_digits " +
                                std::to_string(significant_digits_) + " vs " + std::to_string(other.significant_digits_) +
                                ", highest_trackable " + std::to_string(highest_trackable_) + " vs " +
                                std::to_string(other.highest_trackable_) + ")");
  }
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  saturated_ += other.saturated_;
  // An empty side holds INT64_MAX / 0, which leave the other side's extremes unchanged.
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
  saturated_ = 0;
  min_ = INT64_MAX;
  max_ = 0;
}

std::int64_t LatencyHistogram::min() const { return total_ == 0 ? 0 : min_; }

std::int64_t LatencyHistogram::max() const { return total_ == 0 ? 0 : max_; }

double LatencyHistogram::mean() const {
  if (total_ == 0) return 0.0;
  double sum = 0.0;
  for_each_nonzero(counts_, [&](std::size_t i, std::uint64_t count) {
    sum += midpoint(lowest_equivalent(i), highest_equivalent(i)) * static_cast<double>(count);
  });
  return sum / static_cast<double>(total_);
}

double LatencyHistogram::stddev() const {
  if (total_ == 0) return 0.0;
  const double mu = mean();
  double squares = 0.0;
  for_each_nonzero(counts_, [&](std::size_t i, std::uint64_t count) {
    const double deviation = midpoint(lowest_equivalent(i), highest_equivalent(i)) - mu;
    squares += deviation * deviation * static_cast<double>(count);
  });
  return std::sqrt(squares / static_cast<double>(total_));
}

std::int64_t LatencyHistogram::value_at_percentile(double p) const {
  if (!(p >= 0.0 && p <= 100.0)) {  // also rejects NaN
    throw std::invalid_argument("percentile " + std::to_string(p) + " is outside [0, 100]");
  }
  if (total_ == 0) return 0;
  const double rank = tolerant_ceil(p / 100.0 * static_cast<double>(total_));
  return value_at_rank(rank < 1.0 ? 1 : static_cast<std::uint64_t>(rank));
}

std::int64_t LatencyHistogram::value_at_rank(std::uint64_t rank) const {
  if (total_ == 0) return 0;
  rank = std::clamp<std::uint64_t>(rank, 1, total_);
  if (rank == 1) return min_;  // known exactly, so better than its bucket's upper edge
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    // The bucket's top is the conservative (never optimistic) latency for this rank.
    if (seen >= rank) return std::clamp(highest_equivalent(i), min_, max_);
  }
  return max_;  // unreachable while the counts sum to total_
}

double LatencyHistogram::relative_precision() const { return 1.0 / static_cast<double>(sub_bucket_half_count_); }

nlohmann::json LatencyHistogram::to_json() const {
  json buckets = json::array();
  for_each_nonzero(counts_, [&](std::size_t i, std::uint64_t count) { buckets.push_back(json::array({i, count})); });
  return json{{"significant_digits", significant_digits_},
              {"highest_trackable", highest_trackable_},
              {"count", total_},
              {"min", min()},
              {"max", max()},
              {"saturated", saturated_},
              {"buckets", std::move(buckets)}};
}

LatencyHistogram LatencyHistogram::from_json(const nlohmann::json& j) {
  require(j.is_object(), "expected an object");
  const std::int64_t digits = int_field(j, "significant_digits");
  const std::int64_t highest = int_field(j, "highest_trackable");
  validate_settings(digits, highest);  // before narrowing digits to int
  LatencyHistogram h(static_cast<int>(digits), highest);

  const std::uint64_t count = uint_field(j, "count");
  const std::uint64_t saturated = uint_field(j, "saturated");
  const std::int64_t min = int_field(j, "min");
  const std::int64_t max = int_field(j, "max");
  require(load_buckets(field(j, "buckets"), h.counts_) == count, "the bucket counts do not add up to \"count\"");
  require(saturated <= count, "\"saturated\" exceeds \"count\"");
  if (count == 0) {
    require(min == 0 && max == 0, "an empty histogram must have min and max 0");
  } else {
    require(0 <= min && min <= max && max <= highest, "min and max must satisfy 0 <= min <= max <= highest_trackable");
    const auto nonzero = [](std::uint64_t c) { return c != 0; };
    const auto first = std::find_if(h.counts_.begin(), h.counts_.end(), nonzero);
    const auto last = std::find_if(h.counts_.rbegin(), h.counts_.rend(), nonzero);
    require(h.index_of(min) == static_cast<std::size_t>(first - h.counts_.begin()),
            "min does not fall in the lowest non-empty bucket");
    require(h.index_of(max) == static_cast<std::size_t>(h.counts_.rend() - last) - 1,
            "max does not fall in the highest non-empty bucket");
    require(saturated == 0 || max == highest, "saturated values imply max == highest_trackable");
  }
  h.total_ = count;
  h.saturated_ = saturated;
  h.min_ = count == 0 ? INT64_MAX : min;
  h.max_ = max;
  return h;
}

// ============================== IntervalSeries ==============================================

IntervalSeries::IntervalSeries(std::int64_t interval_ns, std::int64_t max_duration_ns, int significant_digits)
    : interval_ns_(interval_ns) {
  if (interval_ns <= 0) {
    throw std::invalid_argument("interval length must be positive, got " + std::to_string(interval_ns) + " ns");
  }
  if (max_duration_ns < 0) {
    throw std::invalid_argument("maximum run duration must not be negative, got " + std::to_string(max_duration_ns) + " ns");
  }
  // ceil(max / interval) + 1: the extra interval takes completions that overrun the maximum.
  const auto whole = static_cast<std::uint64_t>(max_duration_ns / interval_ns);
  const std::uint64_t count = whole + (max_duration_ns % interval_ns != 0 ? 1 : 0) + 1;
  if (count > kMaxIntervals) {
    throw std::invalid_argument("a " + std::to_string(max_duration_ns) + " ns run in " + std::to_string(interval_ns) +
                                " ns intervals needs " + std::to_string(count) + " intervals, more than the " +
                                std::to_string(kMaxIntervals) + " allowed; use a longer interval");
  }
  intervals_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    intervals_.push_back(Interval{static_cast<std::int64_t>(i) * interval_ns, 0, 0, LatencyHistogram(significant_digits)});
  }
}

void IntervalSeries::record(std::int64_t at_ns, std::int64_t latency_ns) {
  const std::size_t i = interval_index(at_ns, interval_ns_, intervals_.size());
  ++intervals_[i].completed;
  intervals_[i].latency.record(latency_ns);
  last_used_ = std::max(last_used_, i);
  any_ = true;
}

void IntervalSeries::record_error(std::int64_t at_ns) {
  const std::size_t i = interval_index(at_ns, interval_ns_, intervals_.size());
  ++intervals_[i].errors;
  last_used_ = std::max(last_used_, i);
  any_ = true;
}

std::size_t IntervalSeries::used_intervals() const { return any_ ? last_used_ + 1 : 0; }

LatencyHistogram IntervalSeries::merged() const {
  // Copying the first interval's histogram carries over its settings.
  LatencyHistogram all = intervals_.front().latency;
  for (std::size_t i = 1; i < used_intervals(); ++i) all.merge(intervals_[i].latency);
  return all;
}

void IntervalSeries::merge(const IntervalSeries& other) {
  if (other.interval_ns_ != interval_ns_ || other.intervals_.size() != intervals_.size())
    throw std::invalid_argument("cannot merge interval series of different interval or length");
  for (std::size_t i = 0; i < other.used_intervals(); ++i) {
    intervals_[i].completed += other.intervals_[i].completed;
    intervals_[i].errors += other.intervals_[i].errors;
    intervals_[i].latency.merge(other.intervals_[i].latency);
  }
  if (other.any_) {
    last_used_ = any_ ? std::max(last_used_, other.last_used_) : other.last_used_;
    any_ = true;
  }
}

nlohmann::json IntervalSeries::to_json() const {
  constexpr double kNsPerS = 1e9;
  constexpr double kNsPerMs = 1e6;
  const double interval_s = static_cast<double>(interval_ns_) / kNsPerS;
  json rows = json::array();
  for (std::size_t i = 0; i < used_intervals(); ++i) {
    const Interval& in = intervals_[i];
    // Latency columns are null rather than 0 when nothing completed in the interval.
    const auto ms = [&](std::int64_t ns) {
      return in.latency.count() == 0 ? json(nullptr) : json(static_cast<double>(ns) / kNsPerMs);
    };
    json row = {{"t_s", static_cast<double>(in.start_ns) / kNsPerS},
                {"completed", in.completed},
                {"errors", in.errors},
                {"throughput_per_s", static_cast<double>(in.completed) / interval_s},
                {"p50_ms", ms(in.latency.value_at_percentile(50.0))},
                {"p99_ms", ms(in.latency.value_at_percentile(99.0))},
                {"max_ms", ms(in.latency.max())}};
    rows.push_back(std::move(row));
  }
  return rows;
}

// ============================== Early stopping ==============================================

double claimable_percentile(std::uint64_t n, std::uint64_t k_over_target, double confidence) {
  validate_confidence(confidence);
  if (n == 0 || k_over_target >= n) return 0.0;
  const double alpha = 1.0 - confidence;
  // If the true over-target fraction were 1 - q, seeing only k over target must be improbable.
  // P(X <= k) grows with q, so the claim holds exactly below one boundary: bisect for it.
  const auto claim_holds = [&](double q) { return binomial_cdf(n, k_over_target, 1.0 - q) <= alpha; };
  double holds = 0.0;
  double fails = 1.0;
  while (fails - holds > kQuantileTolerance) {
    const double mid = 0.5 * (holds + fails);
    (claim_holds(mid) ? holds : fails) = mid;
  }
  return 100.0 * holds;
}

std::uint64_t min_queries_for_percentile(double percentile, double confidence) {
  if (!(percentile > 0.0 && percentile < 100.0)) {
    throw std::invalid_argument("percentile for early stopping must be in (0, 100), got " + std::to_string(percentile));
  }
  validate_confidence(confidence);
  // With no query over target the claim holds once (p / 100)^n <= 1 - confidence.
  const double n = tolerant_ceil(std::log1p(-confidence) / std::log(percentile / 100.0));
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(n));
}

std::optional<std::uint64_t> samples_allowed_above(std::uint64_t n, double percentile, double confidence) {
  if (n < min_queries_for_percentile(percentile, confidence)) return std::nullopt;
  const double alpha = 1.0 - confidence, over = 1.0 - percentile / 100.0;
  // P(X <= t) grows with t: bisect for the last t at which seeing t over is still improbable.
  std::uint64_t holds = 0, fails = n;  // binomial_cdf(n, 0, over) <= alpha since n is enough
  while (fails - holds > 1) {
    const auto mid = holds + (fails - holds) / 2;
    (binomial_cdf(n, mid, over) <= alpha ? holds : fails) = mid;
  }
  return holds;
}

std::optional<double> early_stopping_estimate(std::vector<double> samples, double percentile, double confidence) {
  const auto above = samples_allowed_above(samples.size(), percentile, confidence);
  if (!above) return std::nullopt;
  const auto index = samples.size() - *above - 1;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index), samples.end());
  return samples[index];
}

nlohmann::json IntervalSeries::to_exact_json() const {
  json used = json::array();
  for (std::size_t i = 0; i < used_intervals(); ++i) {
    const Interval& in = intervals_[i];
    if (in.completed == 0 && in.errors == 0) continue;
    used.push_back(json::array({i, in.completed, in.errors, in.latency.to_json()}));
  }
  return json{{"interval_ns", interval_ns_},
              {"length", intervals_.size()},
              {"significant_digits", intervals_.front().latency.to_json()["significant_digits"]},
              {"intervals", std::move(used)}};
}

IntervalSeries IntervalSeries::from_exact_json(const nlohmann::json& j) {
  require(j.is_object(), "expected an object");
  const std::int64_t interval_ns = int_field(j, "interval_ns");
  const std::uint64_t length = uint_field(j, "length");
  require(interval_ns > 0 && length >= 1 && length <= kMaxIntervals, "interval_ns and length out of range");
  IntervalSeries series(interval_ns, static_cast<std::int64_t>(length - 1) * interval_ns,
                        static_cast<int>(int_field(j, "significant_digits")));
  for (const auto& row : field(j, "intervals")) {
    require(row.is_array() && row.size() == 4, "each interval is [index, completed, errors, histogram]");
    const auto i = row[0].get<std::size_t>();
    require(i < series.intervals_.size(), "an interval index beyond the series' length");
    auto& in = series.intervals_[i];
    in.completed = row[1].get<std::uint64_t>();
    in.errors = row[2].get<std::uint64_t>();
    in.latency = LatencyHistogram::from_json(row[3]);
    series.last_used_ = std::max(series.last_used_, i);
    series.any_ = true;
  }
  return series;
}

}  // namespace infermark::stats

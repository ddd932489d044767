#include "stats/significance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/random.hpp"

namespace infermark::stats {
namespace {

void require_samples(std::span<const double> baseline, std::span<const double> candidate) {
  if (baseline.empty() || candidate.empty()) throw std::invalid_argument("significance test needs samples on both sides");
}

// 1-based rank that nearest_rank() picks for percentile p among n values: applying it to the
// ranks themselves keeps one definition of "P99" across summaries and bootstrap.
std::size_t rank_of(std::size_t n, double p) {
  std::vector<double> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 1.0);
  return static_cast<std::size_t>(nearest_rank(ranks, p));
}

// The values at the given ascending 1-based ranks of a resample described by how often each
// element of `sorted` was drawn; one O(n) pass instead of sorting every resample.
void values_at_ranks(const std::vector<double>& sorted, const std::vector<std::uint32_t>& draws,
                     const std::vector<std::size_t>& ranks, std::vector<double>& out) {
  std::size_t seen = 0, next = 0;
  for (std::size_t i = 0; i < sorted.size() && next < ranks.size(); ++i) {
    seen += draws[i];
    while (next < ranks.size() && seen >= ranks[next]) out[next++] = sorted[i];
  }
}

void resample(std::size_t n, SeededRandom& rng, std::vector<std::uint32_t>& draws) {
  std::fill(draws.begin(), draws.end(), 0u);
  for (std::size_t i = 0; i < n; ++i) ++draws[std::min(n - 1, static_cast<std::size_t>(rng.uniform() * static_cast<double>(n)))];
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate) {
  require_samples(baseline, candidate);
  struct Observation {
    double value;
    bool is_candidate;
  };
  std::vector<Observation> pooled;
  pooled.reserve(baseline.size() + candidate.size());
  for (double x : baseline) pooled.push_back({x, false});
  for (double x : candidate) pooled.push_back({x, true});
  std::sort(pooled.begin(), pooled.end(), [](const Observation& a, const Observation& b) { return a.value < b.value; });

  const double n1 = static_cast<double>(candidate.size()), n2 = static_cast<double>(baseline.size());
  const double total = n1 + n2;
  double candidate_rank_sum = 0.0, tie_term = 0.0;  // tie_term: sum of t^3 - t over tied groups
  for (std::size_t start = 0; start < pooled.size();) {
    std::size_t end = start;
    while (end < pooled.size() && pooled[end].value == pooled[start].value) ++end;
    const double t = static_cast<double>(end - start);
    const double average_rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2.0;
    for (std::size_t i = start; i < end; ++i)
      if (pooled[i].is_candidate) candidate_rank_sum += average_rank;
    tie_term += t * t * t - t;
    start = end;
  }

  MannWhitney result;
  result.u = candidate_rank_sum - n1 * (n1 + 1.0) / 2.0;
  const double mean_u = n1 * n2 / 2.0;
  const double variance = n1 * n2 / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
  if (!(variance > 0.0)) return result;                                      // every value tied: no evidence of any shift
  const double distance = std::max(0.0, std::abs(result.u - mean_u) - 0.5);  // continuity correction
  result.z = std::copysign(distance / std::sqrt(variance), result.u - mean_u);
  result.p_value = std::min(1.0, std::erfc(std::abs(result.z) / std::sqrt(2.0)));
  return result;
}

std::vector<RatioEstimate> bootstrap_percentile_ratios(std::span<const double> baseline, std::span<const double> candidate,
                                                       const std::vector<double>& percentiles,
                                                       const BootstrapSettings& settings) {
  require_samples(baseline, candidate);
  if (settings.resamples < 10) throw std::invalid_argument("bootstrap needs at least 10 resamples");
  if (!(settings.confidence > 0.0 && settings.confidence < 1.0))
    throw std::invalid_argument("bootstrap confidence must be in (0, 1)");
  std::vector<double> sorted_base(baseline.begin(), baseline.end()), sorted_cand(candidate.begin(), candidate.end());
  std::sort(sorted_base.begin(), sorted_base.end());
  std::sort(sorted_cand.begin(), sorted_cand.end());

  std::vector<double> ascending = percentiles;
  std::sort(ascending.begin(), ascending.end());
  std::vector<std::size_t> base_ranks, cand_ranks;
  for (double p : ascending) {
    base_ranks.push_back(rank_of(sorted_base.size(), p));
    cand_ranks.push_back(rank_of(sorted_cand.size(), p));
  }

  std::vector<RatioEstimate> estimates;
  for (std::size_t k = 0; k < ascending.size(); ++k) {
    const double base_value = sorted_base[base_ranks[k] - 1];
    if (base_value == 0.0) throw std::invalid_argument("baseline percentile is 0; a ratio is undefined");
    estimates.push_back({ascending[k], sorted_cand[cand_ranks[k] - 1] / base_value, {}});
  }

  SeededRandom rng(settings.seed);
  std::vector<std::uint32_t> base_draws(sorted_base.size()), cand_draws(sorted_cand.size());
  std::vector<double> base_values(ascending.size()), cand_values(ascending.size());
  std::vector<std::vector<double>> ratios(ascending.size(), std::vector<double>(static_cast<std::size_t>(settings.resamples)));
  for (int b = 0; b < settings.resamples; ++b) {
    resample(sorted_base.size(), rng, base_draws);
    resample(sorted_cand.size(), rng, cand_draws);
    values_at_ranks(sorted_base, base_draws, base_ranks, base_values);
    values_at_ranks(sorted_cand, cand_draws, cand_ranks, cand_values);
    // A resampled baseline percentile of 0 (all-zero tail) gives +inf, which sorts last.
    for (std::size_t k = 0; k < ascending.size(); ++k) ratios[k][static_cast<std::size_t>(b)] = cand_values[k] / base_values[k];
  }
  const double tail = (1.0 - settings.confidence) / 2.0 * 100.0;
  for (std::size_t k = 0; k < ascending.size(); ++k) {
    std::sort(ratios[k].begin(), ratios[k].end());
    estimates[k].ci = {nearest_rank(ratios[k], tail), nearest_rank(ratios[k], 100.0 - tail)};
  }
  // Back to the order the caller asked for.
  std::vector<RatioEstimate> ordered;
  for (double p : percentiles)
    ordered.push_back(
        *std::find_if(estimates.begin(), estimates.end(), [p](const RatioEstimate& e) { return e.percentile == p; }));
  return ordered;
}

bool intervals_overlap(const Interval& a, const Interval& b) { return a.low <= b.high && b.low <= a.high; }

}  // namespace infermark::stats

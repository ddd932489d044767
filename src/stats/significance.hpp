// Two-sample significance tests for latency samples: is a candidate's latency distribution really
// shifted from a baseline's, and by how much (Mann-Whitney U, bootstrap ratio intervals).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/latency_summary.hpp"

namespace infermark::stats {

struct MannWhitney {
  double u = 0.0;        // U of the candidate sample (large when the candidate tends to be larger)
  double z = 0.0;        // standardised U, with continuity and tie correction; > 0: candidate larger
  double p_value = 1.0;  // two-sided, normal approximation
};

// Two-sided Mann-Whitney U test for a location shift between `baseline` and `candidate`. Ties
// get average ranks and the variance their correction; the normal approximation is accurate
// from about 20 samples per side. Throws std::invalid_argument for an empty sample.
MannWhitney mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate);

struct BootstrapSettings {
  int resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 42;  // fixed, so the same files always give the same interval
};

struct RatioEstimate {
  double percentile = 0.0;  // e.g. 50.0
  double ratio = 0.0;       // candidate / baseline of the nearest-rank percentile
  Interval ci;              // percentile-bootstrap interval of that ratio
};

// Bootstrap (independent resampling of both samples) confidence intervals of the ratio
// candidate percentile / baseline percentile, for each of `percentiles`. Throws
// std::invalid_argument for an empty sample, a baseline percentile of 0, or bad settings.
std::vector<RatioEstimate> bootstrap_percentile_ratios(std::span<const double> baseline, std::span<const double> candidate,
                                                       const std::vector<double>& percentiles,
                                                       const BootstrapSettings& settings = {});

// Whether two intervals share any point (the fallback judgement when only intervals are stored).
bool intervals_overlap(const Interval& a, const Interval& b);

}  // namespace infermark::stats

// Guided configuration search: the highest-throughput point of a grid of settings that meets a
// P99 target, found by coordinate descent from the cheapest corner instead of measuring every
// point. Pure logic: the caller supplies how to measure a point.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace infermark::study {

// One axis of the grid: how many values it has and whether they are ordered (numbers, where a
// neighbour is one step up or down) or categorical (every value is a neighbour of every other).
struct SearchAxis {
  std::size_t size = 0;
  bool ordered = true;
};

using GridPoint = std::vector<std::size_t>;  // one value index per axis

struct PointScore {
  bool measured = false;  // false: the cell failed (crash, error); worse than any measurement
  double throughput = 0;  // inferences/s
  double p99_ms = 0;
};

using Evaluate = std::function<PointScore(const GridPoint&)>;

struct SearchOutcome {
  std::optional<GridPoint> best;     // highest throughput meeting the target; none if no point does
  std::vector<GridPoint> evaluated;  // every point measured, in order, each once
  std::vector<PointScore> scores;    // their scores, same order
  std::size_t grid_size = 0;         // points in the full matrix
};

bool meets_target(const PointScore& score, double p99_target_ms);

// Coordinate descent: start at index 0 of every axis (the smallest batch, fewest threads: the
// lowest latency, so the likeliest to meet the target), then, axis by axis, walk ordered axes up
// or down while the score improves and try every value of categorical axes; when no single axis
// improves, try one step on two ordered axes at once (a trade at the target's boundary); stop when
// that does not improve either. It finds the exhaustive answer where throughput has one peak along
// each axis and the target does not split the feasible cells into islands. Scores order as: meets the target with more throughput > meets it > lower P99 among
// points that miss it > failed. Each point is measured at most once.
SearchOutcome guided_search(const std::vector<SearchAxis>& axes, double p99_target_ms, const Evaluate& evaluate);

// Every point, in odometer order (axis 0 fastest): the reference the guided search must match.
SearchOutcome exhaustive_search(const std::vector<SearchAxis>& axes, double p99_target_ms, const Evaluate& evaluate);

// Position of a point in odometer order (axis 0 fastest), as the study's cell list is laid out.
std::size_t grid_index(const std::vector<SearchAxis>& axes, const GridPoint& point);

}  // namespace infermark::study

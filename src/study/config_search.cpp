#include "study/config_search.hpp"

#include <map>

namespace infermark::study {
namespace {

// Failed < misses the target (lower P99 is closer) < meets it (more throughput is better).
bool better(const PointScore& a, const PointScore& b, double target) {
  const auto tier = [target](const PointScore& s) { return !s.measured ? 0 : meets_target(s, target) ? 2 : 1; };
  if (tier(a) != tier(b)) return tier(a) > tier(b);
  if (tier(a) == 2) return a.throughput > b.throughput;
  if (tier(a) == 1) return a.p99_ms < b.p99_ms;
  return false;
}

// Measures each point once, remembering the order.
class MemoEvaluator {
 public:
  MemoEvaluator(const Evaluate& evaluate, SearchOutcome& outcome) : evaluate_(evaluate), outcome_(outcome) {}
  const PointScore& operator()(const GridPoint& point) {
    if (auto it = cache_.find(point); it != cache_.end()) return it->second;
    const auto score = evaluate_(point);
    outcome_.evaluated.push_back(point);
    outcome_.scores.push_back(score);
    return cache_.emplace(point, score).first->second;
  }

 private:
  const Evaluate& evaluate_;
  SearchOutcome& outcome_;
  std::map<GridPoint, PointScore> cache_;
};

std::size_t grid_size(const std::vector<SearchAxis>& axes) {
  std::size_t size = 1;
  for (const auto& axis : axes) size *= axis.size;
  return size;
}

// The highest throughput among the measured points that meet the target.
void choose_best(SearchOutcome& outcome, double target) {
  const PointScore* best = nullptr;
  for (std::size_t i = 0; i < outcome.evaluated.size(); ++i) {
    const auto& score = outcome.scores[i];
    if (meets_target(score, target) && (!best || score.throughput > best->throughput)) {
      best = &score;
      outcome.best = outcome.evaluated[i];
    }
  }
}

}  // namespace

bool meets_target(const PointScore& score, double p99_target_ms) { return score.measured && score.p99_ms <= p99_target_ms; }

std::size_t grid_index(const std::vector<SearchAxis>& axes, const GridPoint& point) {
  std::size_t index = 0, stride = 1;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    index += point[a] * stride;
    stride *= axes[a].size;
  }
  return index;
}

namespace {

// Runs `walk` over a grid with memoised measurements, then picks the best cell it measured.
template <typename Walk>
SearchOutcome search_with(const std::vector<SearchAxis>& axes, double p99_target_ms, const Evaluate& evaluate, Walk walk) {
  SearchOutcome outcome;
  outcome.grid_size = grid_size(axes);
  if (outcome.grid_size == 0) return outcome;
  MemoEvaluator measure(evaluate, outcome);
  walk(measure);
  choose_best(outcome, p99_target_ms);
  return outcome;
}

void guided_walk(const std::vector<SearchAxis>& axes, double p99_target_ms, MemoEvaluator& measure) {
  GridPoint current(axes.size(), 0);
  PointScore current_score = measure(current);
  const auto improves = [&](const GridPoint& candidate) { return better(measure(candidate), current_score, p99_target_ms); };
  const auto move_to = [&](const GridPoint& point) {
    current = point;
    current_score = measure(point);
  };
  // At the target's boundary one axis alone often cannot improve (a bigger batch breaks the
  // target) while a trade between two can (a smaller batch for more clients): try one step on two
  // ordered axes at once before stopping.
  const auto try_diagonals = [&] {
    GridPoint best = current;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (std::size_t b = a + 1; b < axes.size(); ++b)
        for (int da : {-1, 1})
          for (int db : {-1, 1}) {
            if (!axes[a].ordered || !axes[b].ordered) continue;
            const auto can_step = [&](std::size_t axis, int d) {
              return d < 0 ? current[axis] > 0 : current[axis] + 1 < axes[axis].size;
            };
            if (!can_step(a, da) || !can_step(b, db)) continue;
            GridPoint candidate = current;
            candidate[a] = da < 0 ? current[a] - 1 : current[a] + 1;
            candidate[b] = db < 0 ? current[b] - 1 : current[b] + 1;
            if (better(measure(candidate), measure(best), p99_target_ms)) best = candidate;
          }
    if (best == current) return false;
    move_to(best);
    return true;
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].size < 2) continue;
      if (!axes[a].ordered) {
        GridPoint best = current;
        for (std::size_t v = 0; v < axes[a].size; ++v) {
          GridPoint candidate = current;
          candidate[a] = v;
          if (better(measure(candidate), measure(best), p99_target_ms)) best = candidate;
        }
        if (best != current) move_to(best), moved = true;
        continue;
      }
      // Ordered axis: the better of the two neighbours gives the direction; walk while it improves.
      const auto step = [&](int direction) -> std::optional<GridPoint> {
        const auto& value = current[a];
        if ((direction < 0 && value == 0) || (direction > 0 && value + 1 >= axes[a].size)) return std::nullopt;
        GridPoint next = current;
        next[a] = direction > 0 ? value + 1 : value - 1;
        return next;
      };
      const auto up = step(+1), down = step(-1);
      int direction = 0;
      if (up && improves(*up)) direction = +1;
      if (down && improves(*down) && (direction == 0 || better(measure(*down), measure(*up), p99_target_ms))) direction = -1;
      while (direction != 0) {
        move_to(*step(direction));
        moved = true;
        const auto next = step(direction);
        if (!next || !improves(*next)) break;
      }
    }
    if (!moved) moved = try_diagonals();
  }
}

}  // namespace

SearchOutcome guided_search(const std::vector<SearchAxis>& axes, double p99_target_ms, const Evaluate& evaluate) {
  return search_with(axes, p99_target_ms, evaluate, [&](MemoEvaluator& measure) { guided_walk(axes, p99_target_ms, measure); });
}

SearchOutcome exhaustive_search(const std::vector<SearchAxis>& axes, double p99_target_ms, const Evaluate& evaluate) {
  return search_with(axes, p99_target_ms, evaluate, [&](MemoEvaluator& measure) {
    GridPoint point(axes.size(), 0);  // odometer, axis 0 fastest
    for (;;) {
      measure(point);
      std::size_t a = 0;
      while (a < point.size() && ++point[a] == axes[a].size) point[a++] = 0;
      if (a == point.size()) break;
    }
  });
}

}  // namespace infermark::study

// The guided configuration search on synthetic landscapes: where the landscape rises to one peak
// along each axis, it must find exactly what measuring every cell finds, with fewer cells.
#include "study/config_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace infermark::study {
namespace {

// A model of batch x threads on a 3-core machine: latency grows with the batch and shrinks with
// threads up to the cores, then rises again (oversubscription); throughput is batch / latency.
struct BatchThreads {
  std::vector<double> batches{1, 2, 4, 8, 16, 32, 64};
  std::vector<double> threads{1, 2, 3, 4, 6};
  int calls = 0;
  std::vector<SearchAxis> axes() const { return {{batches.size(), true}, {threads.size(), true}}; }
  PointScore operator()(const GridPoint& p) {
    ++calls;
    const double b = batches[p[0]], t = threads[p[1]];
    const double speedup = t <= 3 ? t : 3 - 0.4 * (t - 3);
    const double latency_ms = (2 + 1.5 * b) / speedup;
    return {true, b * 1000 / latency_ms, latency_ms * 1.3};
  }
};

Evaluate counting(BatchThreads& landscape) {
  return [&landscape](const GridPoint& p) { return landscape(p); };
}

TEST(ConfigSearch, AgreesWithExhaustiveOnASmallMatrixAndRunsFewerCells) {
  for (double target : {5.0, 12.0, 40.0, 1000.0}) {
    BatchThreads guided_landscape, full_landscape;
    const auto guided = guided_search(guided_landscape.axes(), target, counting(guided_landscape));
    const auto full = exhaustive_search(full_landscape.axes(), target, counting(full_landscape));
    ASSERT_TRUE(full.best.has_value()) << target;
    ASSERT_TRUE(guided.best.has_value()) << target;
    EXPECT_EQ(*guided.best, *full.best) << "target " << target;
    EXPECT_EQ(full.evaluated.size(), 35u);
    EXPECT_EQ(guided.grid_size, 35u);
    EXPECT_LT(guided.evaluated.size(), full.evaluated.size()) << "target " << target;
    EXPECT_EQ(guided_landscape.calls, static_cast<int>(guided.evaluated.size()));  // each cell measured once
  }
}

TEST(ConfigSearch, TheTargetCapsTheBatch) {
  BatchThreads landscape;
  // At 3 threads: batch 8 -> 14/3 ms latency, P99 ~6.07 ms; batch 16 -> P99 ~11.3 ms.
  const auto outcome = guided_search(landscape.axes(), 7.0, counting(landscape));
  ASSERT_TRUE(outcome.best.has_value());
  EXPECT_EQ(*outcome.best, (GridPoint{3, 2}));  // batch 8, 3 threads
  for (std::size_t i = 0; i < outcome.evaluated.size(); ++i)
    if (outcome.evaluated[i] == *outcome.best) {
      EXPECT_LE(outcome.scores[i].p99_ms, 7.0);
    }
}

TEST(ConfigSearch, NoCellMeetsAnImpossibleTarget) {
  BatchThreads landscape;
  const auto outcome = guided_search(landscape.axes(), 0.01, counting(landscape));
  EXPECT_FALSE(outcome.best.has_value());
  // It still walked toward lower latency: the most threads that help, batch 1.
  EXPECT_NE(std::find(outcome.evaluated.begin(), outcome.evaluated.end(), GridPoint{0, 2}), outcome.evaluated.end());
}

TEST(ConfigSearch, CategoricalAxesTryEveryValue) {
  // A precision-like axis whose best value is neither first nor adjacent to the start.
  const std::vector<double> speed{1.0, 0.7, 2.5, 1.2};
  const std::vector<SearchAxis> axes{{4, false}, {3, true}};
  const auto evaluate = [&](const GridPoint& p) {
    const double batch = std::pow(2, p[1]);
    return PointScore{true, speed[p[0]] * batch * 100, 10 * batch / speed[p[0]]};
  };
  const auto guided = guided_search(axes, 20.0, evaluate), full = exhaustive_search(axes, 20.0, evaluate);
  ASSERT_TRUE(guided.best && full.best);
  EXPECT_EQ(*guided.best, *full.best);
  EXPECT_EQ(*guided.best, (GridPoint{2, 2}));  // fastest variant, batch 4: P99 16 ms
}

TEST(ConfigSearch, FailedCellsAreNeverChosenAndTheWalkGoesOn) {
  BatchThreads landscape;
  const auto evaluate = [&](const GridPoint& p) {
    if (p == GridPoint{1, 0}) return PointScore{};  // batch 2 crashed at one thread
    return landscape(p);
  };
  const auto guided = guided_search(landscape.axes(), 1000.0, evaluate);
  const auto full = exhaustive_search(landscape.axes(), 1000.0, evaluate);
  ASSERT_TRUE(guided.best && full.best);
  EXPECT_EQ(*guided.best, *full.best);
}

TEST(ConfigSearch, AgreesWithExhaustiveOnRandomRealisticLandscapes) {
  // Throughput and latency are products of per-axis factors of the kinds study axes have: one
  // batch-like axis (throughput rises with diminishing returns, latency rises), threads-like
  // axes (latency falls to a minimum where throughput peaks, then both worsen), and categorical
  // axes whose faster values are faster both ways (a quicker kernel, a lower precision).
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0.5, 2.0);
  int fewer = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<SearchAxis> axes{{6, true}, {5, true}, {3, false}};
    std::vector<std::vector<double>> gain(3), cost(3);
    const double returns = std::uniform_real_distribution<double>(0.2, 1.0)(rng);
    const std::size_t peak = std::uniform_int_distribution<std::size_t>(0, axes[1].size - 1)(rng);
    for (std::size_t v = 0; v < axes[0].size; ++v) {  // batch-like
      gain[0].push_back(std::pow(1.0 + static_cast<double>(v), returns));
      cost[0].push_back(1.0 + static_cast<double>(v));
    }
    for (std::size_t v = 0; v < axes[1].size; ++v) {  // threads-like
      gain[1].push_back(3.0 / (1 + std::abs(static_cast<double>(v) - static_cast<double>(peak))));
      cost[1].push_back(1 / gain[1].back());
    }
    for (std::size_t v = 0; v < axes[2].size; ++v) {  // categorical
      gain[2].push_back(unit(rng));
      cost[2].push_back(1 / gain[2].back());
    }
    const auto evaluate = [&](const GridPoint& p) {
      double g = 1, c = 1;
      for (std::size_t a = 0; a < 3; ++a) g *= gain[a][p[a]], c *= cost[a][p[a]];
      return PointScore{true, 100 * g, c};
    };
    const double target = std::uniform_real_distribution<double>(0.2, 8)(rng);
    const auto guided = guided_search(axes, target, evaluate), full = exhaustive_search(axes, target, evaluate);
    ASSERT_EQ(guided.best.has_value(), full.best.has_value()) << "trial " << trial;
    if (!full.best) continue;
    // The same throughput (ties between cells may pick either).
    const auto throughput = [&](const SearchOutcome& o) {
      for (std::size_t i = 0; i < o.evaluated.size(); ++i)
        if (o.evaluated[i] == *o.best) return o.scores[i].throughput;
      return -1.0;
    };
    ASSERT_DOUBLE_EQ(throughput(guided), throughput(full)) << "trial " << trial << " target " << target;
    fewer += guided.evaluated.size() < full.evaluated.size();
    const std::set<GridPoint> distinct(guided.evaluated.begin(), guided.evaluated.end());
    EXPECT_EQ(distinct.size(), guided.evaluated.size());
  }
  EXPECT_GT(fewer, 250);
}

TEST(ConfigSearch, TradesBetweenTwoAxesAtTheTarget) {
  // Batch and concurrency both raise throughput and latency; concurrency pays better. Walking the
  // batch axis first reaches the target at batch 16, where no single axis can improve: only the
  // trade "half the batch, twice the clients" leads on to the best cell, 16 clients at batch 1.
  const std::vector<SearchAxis> axes{{5, true}, {5, true}};  // batch, concurrency: 1, 2, 4, 8, 16
  const auto evaluate = [](const GridPoint& p) {
    const double batch = std::pow(2, p[0]), clients = std::pow(2, p[1]);
    return PointScore{true, 100 * std::pow(batch, 0.3) * std::pow(clients, 0.9), batch * clients};
  };
  const auto guided = guided_search(axes, 16.0, evaluate), full = exhaustive_search(axes, 16.0, evaluate);
  ASSERT_TRUE(guided.best && full.best);
  EXPECT_EQ(*full.best, (GridPoint{0, 4}));
  EXPECT_EQ(*guided.best, *full.best);
}

TEST(ConfigSearch, GridIndexIsOdometerOrder) {
  const std::vector<SearchAxis> axes{{3, true}, {2, true}};
  EXPECT_EQ(grid_index(axes, {0, 0}), 0u);
  EXPECT_EQ(grid_index(axes, {2, 0}), 2u);
  EXPECT_EQ(grid_index(axes, {0, 1}), 3u);
  EXPECT_EQ(grid_index(axes, {2, 1}), 5u);
}

}  // namespace
}  // namespace infermark::study

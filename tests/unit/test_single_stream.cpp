#include <gtest/gtest.h>

#include <numeric>

#include "loadgen/single_stream.hpp"
#include "unit/fake_session.hpp"

namespace infermark::loadgen {

TEST(SingleStream, RunsWarmupThenTimedQueries) {
  testing::FakeSession session;
  const auto log = run_single_stream(session, {7, 25});
  EXPECT_EQ(session.runs, 32);
  EXPECT_EQ(log.latencies_ms.size(), 25u);
  EXPECT_FALSE(log.interrupted);
}

TEST(SingleStream, LatenciesCoverTheWallTime) {
  testing::FakeSession session(std::chrono::microseconds(200));
  const auto log = run_single_stream(session, {1, 20});
  const double sum_ms = std::accumulate(log.latencies_ms.begin(), log.latencies_ms.end(), 0.0);
  // Back-to-back timing: the samples partition the timed loop exactly.
  EXPECT_NEAR(sum_ms, log.wall_s * 1e3, 1e-6);
  for (double l : log.latencies_ms) EXPECT_GE(l, 0.2);  // never below the service time
}

TEST(SingleStream, StopFlagKeepsWhatWasMeasured) {
  testing::FakeSession session;
  std::atomic<bool> stop{true};
  const auto log = run_single_stream(session, {3, 10}, &stop);
  EXPECT_TRUE(log.interrupted);
  EXPECT_TRUE(log.latencies_ms.empty());
  EXPECT_EQ(session.runs, 0);
}

}  // namespace infermark::loadgen

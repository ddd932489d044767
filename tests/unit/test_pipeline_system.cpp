// A pipeline as a system under test, without frameworks: lanes park until the collector hands back
// their own request (in whatever order requests leave the pipeline), a broken pipeline wakes every
// lane with its failure, a timed-out request is a failed query, and warm-up requests are not
// recorded. The stages are a fake transport here: the real ones are covered end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/scenario.hpp"
#include "pipeline/bounded_queue.hpp"
#include "pipeline/pipeline_run.hpp"
#include "pipeline/pipeline_system.hpp"

namespace infermark::pipeline {
namespace {

PipelineSpec two_stages() {
  PipelineSpec spec;
  spec.stages = {{"encoder", "encoder.onnx", "onnxruntime", {}}, {"head", "head.onnx", "onnxruntime", {}}};
  spec.warmup = 0;
  return spec;
}

// Takes whatever tickets are waiting and sends them back in reverse order, stamped as if both
// stages ran; requests named in `drop` are dropped at the head, as past their deadline.
class ReversingPipeline final : public PipelinedSystem {
 public:
  ReversingPipeline(const PipelineSpec& spec, int lanes) : PipelinedSystem(spec, lanes), tickets_(64) {
    worker_ = std::thread([this] { run(); });
  }
  ~ReversingPipeline() override { close(); }
  void close() override {
    tickets_.close();
    if (worker_.joinable()) worker_.join();
  }
  std::vector<StageDescription> stages() const override { return {}; }
  void break_with(const std::string& error) { fail(error); }

  std::set<std::uint64_t> drop;
  std::atomic<int> out_of_order{0};

 protected:
  bool send(PipelineMessage& ticket) override { return tickets_.push(ticket); }

 private:
  void run() {
    while (auto first = tickets_.pop()) {
      std::vector<PipelineMessage> batch{std::move(*first)};
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // let other lanes' tickets gather
      while (tickets_.size() > 0)
        if (auto more = tickets_.pop()) batch.push_back(std::move(*more));
      if (batch.size() > 1) ++out_of_order;
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
        const auto now = mono_now_ns();
        it->admitted_ns = now;
        for (int k = 0; k < 2; ++k) it->stamps[static_cast<std::size_t>(k)] = {now, now, now, now};
        if (drop.count(it->request)) it->dropped_at_stage = 1;
        deliver(*it);
      }
    }
  }
  BoundedQueue<PipelineMessage> tickets_;
  std::thread worker_;
};

}  // namespace

TEST(LaneSlots, WakesTheLaneWhoseRequestCameBackAndNoOther) {
  LaneSlots slots(2);
  slots.expect(0, 7);
  slots.expect(1, 9);
  std::atomic<bool> lane0_woke{false};
  std::thread lane0([&] {
    EXPECT_EQ(slots.wait(0).request, 7u);
    lane0_woke = true;
  });
  PipelineMessage nine;
  nine.request = 9;
  ASSERT_TRUE(slots.deliver(nine));
  EXPECT_EQ(slots.wait(1).request, 9u);  // delivered before lane 1 waited: it does not block
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(lane0_woke.load());  // request 9 was not lane 0's
  PipelineMessage stranger;
  stranger.request = 8;
  EXPECT_FALSE(slots.deliver(stranger));
  PipelineMessage seven;
  seven.request = 7;
  ASSERT_TRUE(slots.deliver(seven));
  lane0.join();
  EXPECT_TRUE(lane0_woke.load());
}

TEST(LaneSlots, AFailureWakesEveryWaitingLaneWithItsCause) {
  LaneSlots slots(3);
  std::vector<std::thread> lanes;
  std::atomic<int> failed{0};
  for (int lane = 0; lane < 3; ++lane) {
    slots.expect(lane, static_cast<std::uint64_t>(lane));
    lanes.emplace_back([&, lane] {
      try {
        slots.wait(lane);
      } catch (const Error& e) {
        if (std::string(e.what()).find("stage 'head' crashed") != std::string::npos) ++failed;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  slots.fail("stage 'head' crashed");
  slots.fail("a later failure is not the cause");
  for (auto& t : lanes) t.join();
  EXPECT_EQ(failed.load(), 3);
  EXPECT_EQ(slots.error(), "stage 'head' crashed");
  EXPECT_THROW(slots.expect(0, 5), Error);
}

TEST(PipelineSystem, EveryLaneGetsItsOwnRequestBackUnderAClosedLoop) {
  const auto spec = two_stages();
  ReversingPipeline pipeline(spec, 4);
  loadgen::ScenarioSpec scenario;
  scenario.name = loadgen::Scenario::kConcurrency;
  scenario.concurrency = 4;
  scenario.warmup_queries = 0;
  scenario.max_queries = 200;
  const auto outcome = loadgen::run_scenario(pipeline, scenario, 4, nullptr);
  pipeline.close();
  ASSERT_EQ(outcome.phases.size(), 1u);
  EXPECT_EQ(outcome.phases[0].recorder.completed(), 200u);
  EXPECT_EQ(outcome.phases[0].recorder.errors(), 0u);  // an internal mix-up would throw
  EXPECT_GT(pipeline.out_of_order.load(), 0);          // requests did come back out of order
  const auto records = pipeline.take_records();
  ASSERT_EQ(records.size(), 200u);
  std::set<std::uint64_t> ids;
  for (const auto& r : records) ids.insert(r.request);
  EXPECT_EQ(ids.size(), 200u);
}

TEST(PipelineSystem, DroppedRequestsAreFailedQueriesAndWarmUpIsNotRecorded) {
  auto spec = two_stages();
  spec.timeout_ms = 50;
  spec.breaker_after = 0;
  ReversingPipeline pipeline(spec, 2);
  pipeline.drop = {1, 5, 6};  // request ids count from the first warm-up request
  pipeline.set_warming(true);
  loadgen::warm_up(pipeline, 1, 3, 0, 1, nullptr);  // requests 0-2, request 1 dropped: not recorded
  pipeline.set_warming(false);
  loadgen::Completion completion;
  pipeline.issue(0, {}, completion);                       // request 3
  pipeline.issue(1, {}, completion);                       // request 4
  EXPECT_THROW(pipeline.issue(0, {}, completion), Error);  // request 5, dropped
  EXPECT_THROW(pipeline.issue(1, {}, completion), Error);  // request 6, dropped
  pipeline.close();
  const auto records = pipeline.take_records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records.front().request, 3u);
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const RequestRecord& r) { return r.dropped_at_stage >= 0; }), 2);
}

TEST(PipelineSystem, ABrokenPipelineFailsTheQueriesInFlightAndAfter) {
  const auto spec = two_stages();
  ReversingPipeline pipeline(spec, 2);
  pipeline.break_with("stage 'head' (onnxruntime): out of memory");
  loadgen::Completion completion;
  try {
    pipeline.issue(0, {}, completion);
    FAIL() << "a broken pipeline accepted a request";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_NE(pipeline.failure().find("stage 'head'"), std::string::npos);
}

TEST(PipelineSystem, TheDefaultLoadIsAClosedLoopAtEachModesDepth) {
  auto spec = two_stages();
  spec.queue_depth = 2;
  spec.requests = 30;
  spec.warmup = 2;
  EXPECT_EQ(pipeline_depth(spec, PipelineMode::kSerial), 1);
  EXPECT_EQ(pipeline_depth(spec, PipelineMode::kThreads), 4);  // two stages busy, two requests queued between them
  LoadRequest load;
  const auto threads = scenario_for_mode(spec, load, PipelineMode::kThreads);
  EXPECT_EQ(threads.name, loadgen::Scenario::kConcurrency);
  EXPECT_EQ(threads.concurrency, 4);
  EXPECT_EQ(threads.max_queries, 30u);
  EXPECT_EQ(threads.warmup_queries, 2u);
  EXPECT_EQ(scenario_for_mode(spec, load, PipelineMode::kSerial).concurrency, 1);

  load.scenario_given = true;
  load.scenario.name = loadgen::Scenario::kServer;
  load.scenario.qps = 50;
  const auto server = scenario_for_mode(spec, load, PipelineMode::kProcesses);
  EXPECT_EQ(server.name, loadgen::Scenario::kServer);
  EXPECT_EQ(loadgen::lanes_needed(server, 64), 4);  // the pipeline's depth, not the machine's cores
  load.concurrency_given = true;
  load.scenario.concurrency = 8;
  EXPECT_EQ(scenario_for_mode(spec, load, PipelineMode::kSerial).concurrency, 8);
}

}  // namespace infermark::pipeline

// A pipeline as a system under test, so every load-generator scenario (closed loop, server, ramp,
// soak, pulse) drives it as it drives a session. A lane's query is one request: it gets a ticket
// (the circuit breaker may refuse it), enters stage 1 and returns when the end of the pipeline has
// it. One subclass per mode moves requests between the stages.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loadgen/system_under_test.hpp"
#include "pipeline/request_flow.hpp"

namespace infermark::pipeline {

// Where lanes wait for their request in the pipelined modes: the collector hands a finished request
// to the lane that issued it and wakes that lane alone; a failure of the pipeline wakes them all.
class LaneSlots {
 public:
  explicit LaneSlots(int lanes);

  int size() const { return static_cast<int>(slots_.size()); }
  // `lane` is about to send `request`. Throws infermark::Error when the pipeline has failed.
  void expect(int lane, std::uint64_t request);
  // The send failed: `lane` waits for nothing.
  void cancel(int lane);
  // Waits for the request `lane` expects and returns it; throws infermark::Error with the
  // pipeline's failure when it failed first.
  PipelineMessage wait(int lane);
  // Hands `message` to the lane expecting it; false when none does.
  bool deliver(PipelineMessage& message);
  // Wakes every waiting lane with `error` (the first failure is kept); expect() throws it from now on.
  void fail(const std::string& error);
  std::string error() const;

 private:
  enum class State { kIdle, kWaiting, kDone };
  struct Slot {
    State state = State::kIdle;
    std::uint64_t request = 0;
    PipelineMessage message;
    std::condition_variable done;  // one per lane: the collector wakes only the lane concerned
  };
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::string error_;
};

class PipelineSystem : public loadgen::SystemUnderTest {
 public:
  PipelineSystem(const PipelineSpec& spec, int lanes);
  ~PipelineSystem() override = default;
  PipelineSystem(const PipelineSystem&) = delete;
  PipelineSystem& operator=(const PipelineSystem&) = delete;

  int lanes() const override { return lanes_; }
  // Every request carries stage 1's one seeded input set.
  const loadgen::SampleLibrary& samples() const override { return sample_; }

  // While warming, requests bypass the breaker, carry no timeout and are not recorded (the
  // pipeline's own warm-up). Call with no request in flight.
  void set_warming(bool warming);
  // Ends the request stream: stages drain and stop (stage workers exit). Call once no lane issues
  // any more; idempotent.
  virtual void close() {}
  // The first failure of the pipeline ("" while it works): a stage threw, a worker died.
  virtual std::string failure() const { return ""; }
  // What each stage really ran (for the processes mode: known once close() has returned).
  virtual std::vector<StageDescription> stages() const = 0;

  // Timed requests in completion order, the last outputs, the breaker.
  std::vector<RequestRecord> take_records();
  std::vector<Tensor> take_last_outputs();
  std::optional<result::TextCheckRecord> text_check();
  std::uint32_t last_sample();  // the input sample of the request whose outputs take_last_outputs() gives
  const CircuitBreaker& breaker() const { return breaker_; }

 protected:
  // A ticket for the next request; throws infermark::Error when the open breaker rejects it.
  PipelineMessage admit();
  // `message` left the pipeline (done or dropped): records it (timed requests only), keeps the
  // last outputs. Thread-safe.
  void collect(PipelineMessage& message);
  // Throws infermark::Error for a request that was dropped or finished past its deadline: to the
  // load generator a timed-out request is a failed query.
  void check(const PipelineMessage& message) const;

  const PipelineSpec& spec_;

 private:
  int lanes_;
  loadgen::SingleSample sample_;
  CircuitBreaker breaker_;
  std::atomic<std::uint64_t> next_request_{0};
  std::atomic<std::uint64_t> first_timed_{0};  // requests from this index on are timed
  std::atomic<bool> warming_{false};
  std::mutex collect_mutex_;
  Collector collector_;
};

// The threads and processes modes: requests enter stage 1 through `send` and a collector thread
// hands each finished one to its lane (deliver()).
class PipelinedSystem : public PipelineSystem {
 public:
  PipelinedSystem(const PipelineSpec& spec, int lanes) : PipelineSystem(spec, lanes), slots_(lanes) {}
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;
  std::string failure() const override { return slots_.error(); }

 protected:
  // Hands `ticket` to stage 1, waiting while its queue is full; false when the pipeline failed.
  virtual bool send(PipelineMessage& ticket) = 0;
  // The collector: `message` came out of the last stage.
  void deliver(PipelineMessage& message);
  // The pipeline broke: every waiting lane fails with `error`.
  void fail(const std::string& error) { slots_.fail(error); }

 private:
  LaneSlots slots_;
};

}  // namespace infermark::pipeline

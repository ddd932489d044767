// Continuous batching over a Generator: the one scheduler behind both `run` (harness
// GeneratorSystem) and `serve` (GenerationEngine). A stepping thread runs one forward pass after
// another over every active sequence slot; queued requests join the running batch at the next
// step (their prefill runs in it) and leave it as soon as they finish, as serving engines (vLLM,
// llama-server) do. What a token means (a time stamp, text for a client) is the request's
// business: the scheduler hands each one to its Sequence, on the stepping thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/generator.hpp"

namespace infermark::generation {

// How a sequence left the scheduler.
enum class SequenceEnd {
  kFinished,     // its Sequence said it was complete
  kCancelled,    // cancelled() turned true, queued or running
  kStartFailed,  // Generator::start or set_sampling threw; `error` has the message
  kStepFailed,   // a step threw: every sequence in that step ends so; `error` has the message
};

// One request as the scheduler sees it. Every call but cancelled() comes from the stepping thread.
class Sequence {
 public:
  virtual ~Sequence() = default;
  virtual const std::vector<TokenId>& prompt() const = 0;
  virtual int max_tokens() const = 0;
  // Sampling for its slot; none: the generator's default (greedy), set_sampling is not called.
  virtual std::optional<Sampling> sampling() const { return std::nullopt; }
  // A client that left; any thread may turn it true.
  virtual bool cancelled() const { return false; }
  // It joined the running batch (its prefill runs in the next step).
  virtual void on_started() {}
  // A token sampled for it at `now_ns` (monotonic); returns true when the sequence is complete.
  virtual bool on_token(TokenId token, std::int64_t now_ns) = 0;
  // Exactly once, after its slot was freed (Generator::finish), however it ended.
  virtual void on_end(SequenceEnd end, const std::string& error) = 0;
};

// Occupancy the owner may export (gauges). Called often, partly under the scheduler's lock: keep them short.
struct SchedulerListener {
  std::function<void(std::size_t queued)> queue_depth;
  std::function<void(std::size_t running)> running;
};

class GenerationScheduler {
 public:
  // Starts the stepping thread. `max_queue`: requests that may wait for a slot.
  explicit GenerationScheduler(Generator& generator, std::size_t max_queue = std::numeric_limits<std::size_t>::max(),
                               SchedulerListener listener = {});
  ~GenerationScheduler();  // closes, lets running and queued sequences finish, joins
  GenerationScheduler(const GenerationScheduler&) = delete;
  GenerationScheduler& operator=(const GenerationScheduler&) = delete;

  // Queues a sequence; false (and the sequence is dropped untouched) when the queue is full or
  // the scheduler is closing.
  bool submit(std::unique_ptr<Sequence> sequence);
  void close();                 // no new sequences; running and queued ones finish
  std::uint64_t steps() const;  // forward passes run so far, failed ones included

 private:
  struct Running {
    std::unique_ptr<Sequence> sequence;
    bool complete = false;
  };
  void step_loop();
  void admit_queued();  // with mutex_ held
  std::optional<std::size_t> least_recently_used_free_slot() const;
  void end(std::size_t slot, SequenceEnd how, const std::string& error);
  bool any_running() const;
  bool any_free_slot() const;

  Generator& generator_;
  std::size_t max_queue_;
  SchedulerListener listener_;
  std::vector<std::optional<Running>> slots_;  // by slot; touched by the stepping thread only
  std::vector<std::uint64_t> last_admitted_;   // by slot: admissions_ when it last took a sequence
  std::uint64_t admissions_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::unique_ptr<Sequence>> queue_;
  bool closing_ = false;
  std::uint64_t steps_ = 0;
  std::thread stepper_;
};

}  // namespace infermark::generation

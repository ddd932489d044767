// The system under test for an in-process language model: each lane is one sequence slot of a
// continuously batched Generator. A stepping thread runs one forward pass after another over every
// active slot; a query joins the running batch at the next step and returns when its last token
// is out, having stamped each token's arrival — as a serving engine behaves, so TTFT includes
// waiting for the step in progress and, in open loop, for a free slot.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/generator.hpp"
#include "harness/prompt_library.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::harness {

class GeneratorSystem final : public loadgen::SystemUnderTest {
 public:
  // Throws infermark::Error when `lanes` exceeds the generator's slots.
  GeneratorSystem(Generator& generator, const PromptLibrary& prompts, int lanes);
  ~GeneratorSystem() override;
  GeneratorSystem(const GeneratorSystem&) = delete;
  GeneratorSystem& operator=(const GeneratorSystem&) = delete;

  int lanes() const override { return static_cast<int>(slots_.size()); }
  const PromptLibrary& samples() const override { return prompts_; }
  // Throws infermark::Error with the generator's message when the request failed.
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;

  std::uint64_t steps() const;

 private:
  enum class SlotState { kFree, kQueued, kRunning, kDone };
  struct Slot {
    SlotState state = SlotState::kFree;
    const PromptSample* prompt = nullptr;
    loadgen::Completion* completion = nullptr;
    std::string error;
  };
  void step_loop();
  bool has_work() const;  // with mutex_ held

  Generator& generator_;
  const PromptLibrary& prompts_;
  std::vector<Slot> slots_;
  mutable std::mutex mutex_;
  std::condition_variable work_;  // the stepping thread waits for queued requests
  std::condition_variable done_;  // lanes wait for their request to finish
  bool stopping_ = false;
  std::uint64_t steps_ = 0;
  std::thread stepper_;
};

}  // namespace infermark::harness

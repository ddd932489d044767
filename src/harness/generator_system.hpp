// The system under test for an in-process language model: each lane is one request in flight on
// the continuously batched Generator, scheduled by the same GenerationScheduler that `serve`
// uses. A query joins the running batch at the next step and returns when its last token is out,
// having stamped each token's arrival — as a serving engine behaves, so TTFT includes waiting
// for the step in progress and, in open loop, for a free slot.
#pragma once

#include <cstdint>

#include "backends/generator.hpp"
#include "generation/generation_scheduler.hpp"
#include "harness/prompt_library.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::harness {

class GeneratorSystem final : public loadgen::SystemUnderTest {
 public:
  // Throws infermark::Error when `lanes` exceeds the generator's slots.
  GeneratorSystem(Generator& generator, const PromptLibrary& prompts, int lanes);
  GeneratorSystem(const GeneratorSystem&) = delete;
  GeneratorSystem& operator=(const GeneratorSystem&) = delete;

  int lanes() const override { return lanes_; }
  const PromptLibrary& samples() const override { return prompts_; }
  // Throws infermark::Error with the generator's message when the request failed.
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;

  std::uint64_t steps() const { return scheduler_.steps(); }

 private:
  const PromptLibrary& prompts_;
  int lanes_;
  loadgen::PrefixWarmthTracker prefixes_;
  generation::GenerationScheduler scheduler_;  // last: its stepping thread stops before the rest goes
};

}  // namespace infermark::harness

#include "harness/generator_system.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"

namespace infermark::harness {

GeneratorSystem::GeneratorSystem(Generator& generator, const PromptLibrary& prompts, int lanes)
    : generator_(generator), prompts_(prompts), slots_(static_cast<std::size_t>(std::max(lanes, 1))) {
  if (lanes > generator.max_slots())
    throw Error("--concurrency " + std::to_string(lanes) + ": the generator was opened with " +
                std::to_string(generator.max_slots()) + " sequence slots");
  stepper_ = std::thread([this] { step_loop(); });
}

GeneratorSystem::~GeneratorSystem() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  stepper_.join();
}

std::uint64_t GeneratorSystem::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

void GeneratorSystem::issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) {
  const auto& prompt = prompts_.at(query.sample);
  completion.prompt_tokens = static_cast<int>(prompt.tokens.size());
  completion.token_ns.reserve(static_cast<std::size_t>(prompt.output_tokens));
  auto& slot = slots_.at(static_cast<std::size_t>(lane));
  std::unique_lock lock(mutex_);
  if (slot.state != SlotState::kFree) throw Error("internal error: lane " + std::to_string(lane) + " issued while busy");
  slot = {SlotState::kQueued, &prompt, &completion, {}};
  work_.notify_one();
  done_.wait(lock, [&] { return slot.state == SlotState::kDone; });
  slot.state = SlotState::kFree;
  slot.completion = nullptr;
  if (!slot.error.empty()) throw Error(slot.error);
}

bool GeneratorSystem::has_work() const {
  for (const auto& slot : slots_)
    if (slot.state == SlotState::kQueued || slot.state == SlotState::kRunning) return true;
  return false;
}

void GeneratorSystem::step_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || has_work(); });
    if (!has_work()) return;  // stopping, nothing in flight
    // Queued requests join the batch now; their prefill runs in this step.
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& slot = slots_[i];
      if (slot.state != SlotState::kQueued) continue;
      try {
        generator_.start(static_cast<int>(i), slot.prompt->tokens, slot.prompt->output_tokens);
        slot.state = SlotState::kRunning;
      } catch (const std::exception& e) {
        slot.error = e.what();
        slot.state = SlotState::kDone;
      }
    }
    if (!has_work()) {
      done_.notify_all();
      continue;
    }
    // The forward pass runs unlocked so lanes can queue the next requests meanwhile. Running slots
    // (and the completions they point at) belong to this thread until marked done.
    std::string step_error;
    lock.unlock();
    try {
      generator_.step([&](const GeneratedToken& token) {
        auto* completion = slots_[static_cast<std::size_t>(token.slot)].completion;
        if (completion) completion->token_ns.push_back(mono_now_ns());
      });
    } catch (const std::exception& e) {
      step_error = e.what();
    }
    lock.lock();
    ++steps_;
    bool finished = false;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& slot = slots_[i];
      if (slot.state != SlotState::kRunning) continue;
      const bool complete = static_cast<int>(slot.completion->token_ns.size()) >= slot.prompt->output_tokens;
      if (!complete && step_error.empty()) continue;
      if (!step_error.empty()) slot.error = "generation step failed: " + step_error;
      generator_.finish(static_cast<int>(i));
      slot.state = SlotState::kDone;
      finished = true;
    }
    if (finished) done_.notify_all();
  }
}

}  // namespace infermark::harness

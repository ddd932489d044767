#include "generation/generation_scheduler.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace infermark::generation {

GenerationScheduler::GenerationScheduler(Generator& generator, std::size_t max_queue, SchedulerListener listener)
    : generator_(generator),
      max_queue_(max_queue),
      listener_(std::move(listener)),
      slots_(static_cast<std::size_t>(std::max(generator.max_slots(), 1))),
      last_admitted_(slots_.size(), 0) {
  stepper_ = std::thread([this] { step_loop(); });
}

GenerationScheduler::~GenerationScheduler() {
  close();
  stepper_.join();
}

void GenerationScheduler::close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  arrived_.notify_all();
}

std::uint64_t GenerationScheduler::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

bool GenerationScheduler::submit(std::unique_ptr<Sequence> sequence) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || queue_.size() >= max_queue_) return false;
    queue_.push_back(std::move(sequence));
    if (listener_.queue_depth) listener_.queue_depth(queue_.size());
  }
  arrived_.notify_all();
  return true;
}

bool GenerationScheduler::any_running() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return slot.has_value(); });
}

bool GenerationScheduler::any_free_slot() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return !slot.has_value(); });
}

void GenerationScheduler::end(std::size_t slot, SequenceEnd how, const std::string& error) {
  auto sequence = std::move(slots_[slot]->sequence);
  slots_[slot].reset();
  try {
    generator_.finish(static_cast<int>(slot));
  } catch (const std::exception&) {
    // The slot is reset on its next start; the sequence hears how it ended below either way.
  }
  sequence->on_end(how, error);
}

// The idle slot given a sequence longest ago, as llama-server picks one: each finished prompt's KV
// cells then stay in their slot for as long as the slots allow, for a prefix cache to reuse (the
// lowest free slot would overwrite the same slot's prompt request after request).
std::optional<std::size_t> GenerationScheduler::least_recently_used_free_slot() const {
  std::optional<std::size_t> chosen;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot)
    if (!slots_[slot] && (!chosen || last_admitted_[slot] < last_admitted_[*chosen])) chosen = slot;
  return chosen;
}

void GenerationScheduler::admit_queued() {
  while (!queue_.empty()) {
    const auto free_slot = least_recently_used_free_slot();
    if (!free_slot) break;
    const auto slot = *free_slot;
    auto sequence = std::move(queue_.front());
    queue_.pop_front();
    if (sequence->cancelled()) {
      sequence->on_end(SequenceEnd::kCancelled, "cancelled");
      continue;
    }
    last_admitted_[slot] = ++admissions_;
    try {
      generator_.start(static_cast<int>(slot), sequence->prompt(), sequence->max_tokens());
      if (const auto sampling = sequence->sampling()) generator_.set_sampling(static_cast<int>(slot), *sampling);
    } catch (const std::exception& e) {
      slots_[slot] = Running{std::move(sequence), false};
      end(slot, SequenceEnd::kStartFailed, e.what());
      continue;
    }
    sequence->on_started();
    slots_[slot] = Running{std::move(sequence), false};
  }
  if (listener_.queue_depth) listener_.queue_depth(queue_.size());
}

void GenerationScheduler::step_loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      arrived_.wait(lock, [&] { return any_running() || (!queue_.empty() && any_free_slot()) || (closing_ && queue_.empty()); });
      if (closing_ && queue_.empty() && !any_running()) return;
      admit_queued();  // new requests join the running batch
    }
    // Clients that left: their slots are freed before the next step.
    for (std::size_t slot = 0; slot < slots_.size(); ++slot)
      if (slots_[slot] && slots_[slot]->sequence->cancelled()) end(slot, SequenceEnd::kCancelled, "cancelled");
    const auto running =
        static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s.has_value(); }));
    if (listener_.running) listener_.running(running);
    if (running == 0) continue;
    // The forward pass runs unlocked so requests can queue meanwhile; slots belong to this thread.
    std::string step_error;
    try {
      generator_.step([this](const GeneratedToken& token) {
        auto& slot = slots_.at(static_cast<std::size_t>(token.slot));
        if (slot && !slot->complete) slot->complete = slot->sequence->on_token(token.token, mono_now_ns());
      });
    } catch (const std::exception& e) {
      step_error = e.what();
    }
    {
      std::lock_guard lock(mutex_);
      ++steps_;
    }
    for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
      if (!slots_[slot]) continue;
      if (!step_error.empty())
        end(slot, SequenceEnd::kStepFailed, step_error);
      else if (slots_[slot]->complete)
        end(slot, SequenceEnd::kFinished, "");
    }
  }
}

}  // namespace infermark::generation

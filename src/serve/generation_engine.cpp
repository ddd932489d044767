#include "serve/generation_engine.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace infermark::serve {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

std::size_t complete_utf8_prefix(std::string_view text) {
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  std::size_t back = 0;
  while (back < 3 && back < text.size() && (static_cast<unsigned char>(text[text.size() - 1 - back]) & 0xC0) == 0x80) ++back;
  if (back == text.size()) return text.size();
  const auto lead = static_cast<unsigned char>(text[text.size() - 1 - back]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return length > back + 1 && lead >= 0xC0 ? text.size() - 1 - back : text.size();
}

GenerationEngine::GenerationEngine(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& spec,
                                   GenerationMetrics metrics)
    : spec_(spec), metrics_(metrics), max_queue_(model.max_queue) {
  const auto file = variant_file(model, spec);
  const auto started = mono_now_ns();
  try {
    backend_ = load_variant_backend(registry, model, spec, true);
    generator_ = (*backend_.loaded)->open_generator(file, backend_.requested);
  } catch (const std::exception& e) {
    throw Error(describe_variant(model, spec) + ": " + e.what());
  }
  load_ms_ = static_cast<double>(mono_now_ns() - started) * 1e-6;
  active_.resize(static_cast<std::size_t>(generator_->max_slots()));
  stepper_ = std::thread([this] { step_loop(); });
}

ServedVariant GenerationEngine::description() const {
  ServedVariant d{backend_.model_name, backend_.model_file, spec_.name, backend_.info, backend_.requested,
                  generator_->effective_settings(), {}, {},
                  load_ms_, {}};
  d.parameters = {{"weight", spec_.weight},
                  {"sequence_slots", generator_->max_slots()},
                  {"context_per_sequence", generator_->context_length()},
                  {"batching", "continuous (requests join and leave the running batch at every step)"}};
  return d;
}

GenerationEngine::~GenerationEngine() {
  close();
  stepper_.join();
}

void GenerationEngine::close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  arrived_.notify_all();
}

bool GenerationEngine::submit(GenerationRequest request) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || queue_.size() >= max_queue_) return false;
    queue_.push_back({std::move(request), mono_now_ns()});
    metrics_.pending->Set(static_cast<double>(queue_.size()));
  }
  arrived_.notify_all();
  return true;
}

void GenerationEngine::flush(Active& active, bool final) {
  // Hold back what a stop string could still be completing, and a split UTF-8 character.
  std::size_t hold = 0;
  if (!final)
    for (const auto& stop : active.request.stop) hold = std::max(hold, stop.size() - 1);
  std::size_t send = active.unsent.size() > hold ? active.unsent.size() - hold : 0;
  if (!final) send = complete_utf8_prefix(std::string_view(active.unsent).substr(0, send));
  if (send == 0) return;
  StreamChunk piece;
  piece.text = active.unsent.substr(0, send);
  active.request.channel->push(std::move(piece));
  active.unsent.erase(0, send);
}

void GenerationEngine::on_token(int slot, TokenId token) {
  auto& active = *active_[static_cast<std::size_t>(slot)];
  const auto now = mono_now_ns();
  metrics_.generated_tokens->Increment();
  if (active.generated++ == 0)
    metrics_.ttft_seconds->Observe(seconds(now - active.enqueued_ns));
  else
    metrics_.tpot_seconds->Observe(seconds(now - active.last_token_ns));
  active.last_token_ns = now;
  if (generator_->is_end_of_generation(token)) {
    active.finished = FinishReason::kStop;
    return;
  }
  active.unsent += generator_->token_piece(token);
  for (const auto& stop : active.request.stop) {
    const auto at = stop.empty() ? std::string::npos : active.unsent.find(stop);
    if (at == std::string::npos) continue;
    active.unsent.resize(at);
    active.finished = FinishReason::kStop;
    return;
  }
  if (active.generated >= active.request.max_tokens) {
    active.finished = FinishReason::kLength;
    return;
  }
  flush(active, false);
}

void GenerationEngine::end(int slot, const std::string& error) {
  auto& active = *active_[static_cast<std::size_t>(slot)];
  if (error.empty()) flush(active, true);
  StreamChunk last;
  last.done = true;
  last.finish = active.finished.value_or(FinishReason::kLength);
  last.error = error;
  last.prompt_tokens = static_cast<int>(active.request.prompt.size());
  last.completion_tokens = active.generated;
  if (error.empty()) {
    const auto latency = mono_now_ns() - active.enqueued_ns;
    metrics_.success->Increment();
    metrics_.total_seconds->Observe(seconds(latency));
    traffic_.record_success(latency, 1);
  } else if (error != "cancelled") {
    traffic_.record_error();
  }
  active.request.channel->push(std::move(last));
  try {
    generator_->finish(slot);
  } catch (const std::exception&) {
    // The slot is reset on its next start; nothing to tell the client that it has not been told.
  }
  active_[static_cast<std::size_t>(slot)].reset();
}

void GenerationEngine::step_loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      const auto any_active = [&] {
        return std::any_of(active_.begin(), active_.end(), [](const auto& a) { return a.has_value(); });
      };
      const auto free_slot = [&] {
        return std::any_of(active_.begin(), active_.end(), [](const auto& a) { return !a.has_value(); });
      };
      arrived_.wait(lock, [&] { return any_active() || (!queue_.empty() && free_slot()) || (closing_ && queue_.empty()); });
      if (closing_ && queue_.empty() && !any_active()) return;
      // New requests join the running batch.
      for (std::size_t slot = 0; slot < active_.size() && !queue_.empty(); ++slot) {
        if (active_[slot]) continue;
        auto queued = std::move(queue_.front());
        queue_.pop_front();
        if (queued.request.channel->cancelled()) continue;
        try {
          generator_->start(static_cast<int>(slot), queued.request.prompt, queued.request.max_tokens);
          generator_->set_sampling(static_cast<int>(slot), queued.request.sampling);
        } catch (const std::exception& e) {
          queued.request.channel->push({"", true, FinishReason::kLength, e.what(), 0, 0});
          try {
            generator_->finish(static_cast<int>(slot));
          } catch (const std::exception&) {
          }
          continue;
        }
        metrics_.prompt_tokens->Increment(static_cast<double>(queued.request.prompt.size()));
        active_[slot] = Active{std::move(queued.request), "", 0, queued.enqueued_ns, 0, std::nullopt};
      }
      metrics_.pending->Set(static_cast<double>(queue_.size()));
    }
    // Clients that left: their slots are freed before the next step.
    for (std::size_t slot = 0; slot < active_.size(); ++slot)
      if (active_[slot] && active_[slot]->request.channel->cancelled()) end(static_cast<int>(slot), "cancelled");
    double running = 0;
    for (const auto& a : active_) running += a.has_value();
    metrics_.active_sequences->Set(running);
    if (running == 0) continue;
    try {
      generator_->step([this](const GeneratedToken& t) { on_token(t.slot, t.token); });
    } catch (const std::exception& e) {
      for (std::size_t slot = 0; slot < active_.size(); ++slot)
        if (active_[slot]) end(static_cast<int>(slot), spec_.backend + " failed: " + e.what());
      continue;
    }
    for (std::size_t slot = 0; slot < active_.size(); ++slot)
      if (active_[slot] && active_[slot]->finished) end(static_cast<int>(slot), "");
  }
}

}  // namespace infermark::serve

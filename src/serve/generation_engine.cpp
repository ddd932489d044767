#include "serve/generation_engine.hpp"

#include <algorithm>
#include <optional>

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

namespace {

// One OpenAI request on the scheduler: its tokens become text for the client's channel.
class TextSequence final : public generation::Sequence {
 public:
  TextSequence(GenerationRequest request, const Generator& generator, GenerationMetrics metrics, ServedTraffic& traffic,
               const std::string& backend, std::uint64_t& reused_counted)
      : request_(std::move(request)),
        generator_(generator),
        metrics_(metrics),
        reused_counted_(reused_counted),
        traffic_(traffic),
        backend_(backend),
        enqueued_ns_(mono_now_ns()) {}

  const std::vector<TokenId>& prompt() const override { return request_.prompt; }
  int max_tokens() const override { return request_.max_tokens; }
  std::optional<Sampling> sampling() const override { return request_.sampling; }
  bool cancelled() const override { return request_.channel->cancelled(); }
  // Runs on the stepping thread right after the generator started the prompt, so the reuse
  // counter's growth since the last start is this prompt's.
  void on_started() override {
    metrics_.prompt_tokens->Increment(static_cast<double>(request_.prompt.size()));
    const auto reused = generator_.prompt_tokens_reused();
    metrics_.prompt_tokens_reused->Increment(static_cast<double>(reused - reused_counted_));
    reused_counted_ = reused;
  }
  bool on_token(TokenId token, std::int64_t now_ns) override;
  void on_end(generation::SequenceEnd end, const std::string& error) override;

 private:
  void flush(bool final);

  GenerationRequest request_;
  const Generator& generator_;
  GenerationMetrics metrics_;
  std::uint64_t& reused_counted_;
  ServedTraffic& traffic_;
  const std::string& backend_;  // the variant's backend name, for failures
  std::string unsent_;          // generated text not yet pushed (stop-string look-behind, split UTF-8)
  int generated_ = 0;
  std::int64_t enqueued_ns_ = 0, last_token_ns_ = 0;
  std::optional<FinishReason> finished_;
};

void TextSequence::flush(bool final) {
  // Hold back what a stop string could still be completing, and a split UTF-8 character.
  std::size_t hold = 0;
  if (!final)
    for (const auto& stop : request_.stop) hold = std::max(hold, stop.size() - 1);
  std::size_t send = unsent_.size() > hold ? unsent_.size() - hold : 0;
  if (!final) send = complete_utf8_prefix(std::string_view(unsent_).substr(0, send));
  if (send == 0) return;
  StreamChunk piece;
  piece.text = unsent_.substr(0, send);
  request_.channel->push(std::move(piece));
  unsent_.erase(0, send);
}

bool TextSequence::on_token(TokenId token, std::int64_t now_ns) {
  metrics_.generated_tokens->Increment();
  if (generated_++ == 0)
    metrics_.ttft_seconds->Observe(seconds(now_ns - enqueued_ns_));
  else
    metrics_.tpot_seconds->Observe(seconds(now_ns - last_token_ns_));
  last_token_ns_ = now_ns;
  if (generator_.is_end_of_generation(token)) {
    if (generated_ > request_.sampling.min_tokens) {
      finished_ = FinishReason::kStop;
      return true;
    }
    // The engine chose an end token before min_tokens (it cannot bar them): it counts, as vLLM
    // counts what follows an ignored end token, but it is not text.
  } else {
    unsent_ += generator_.token_piece(token);
  }
  for (const auto& stop : request_.stop) {
    const auto at = stop.empty() ? std::string::npos : unsent_.find(stop);
    if (at == std::string::npos) continue;
    unsent_.resize(at);
    finished_ = FinishReason::kStop;
    return true;
  }
  if (generated_ >= request_.max_tokens) {
    finished_ = FinishReason::kLength;
    return true;
  }
  flush(false);
  return false;
}

void TextSequence::on_end(generation::SequenceEnd end, const std::string& error) {
  if (end == generation::SequenceEnd::kStartFailed) {  // never ran: nothing generated, nothing counted
    request_.channel->push({"", true, FinishReason::kLength, error, 0, 0});
    return;
  }
  StreamChunk last;
  last.done = true;
  last.finish = finished_.value_or(FinishReason::kLength);
  last.prompt_tokens = static_cast<int>(request_.prompt.size());
  last.completion_tokens = generated_;
  switch (end) {
    case generation::SequenceEnd::kFinished: {
      flush(true);
      const auto latency = mono_now_ns() - enqueued_ns_;
      metrics_.success->Increment();
      metrics_.total_seconds->Observe(seconds(latency));
      traffic_.record_success(latency, 1);
      break;
    }
    case generation::SequenceEnd::kCancelled:
      last.error = error;
      break;
    case generation::SequenceEnd::kStepFailed:
    case generation::SequenceEnd::kStartFailed:
      last.error = backend_ + " failed: " + error;
      traffic_.record_error();
      break;
  }
  request_.channel->push(std::move(last));
}

}  // namespace

GenerationEngine::GenerationEngine(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& spec,
                                   GenerationMetrics metrics)
    : spec_(spec), metrics_(metrics) {
  const auto file = variant_file(model, spec);
  const auto started = mono_now_ns();
  try {
    backend_ = load_variant_backend(registry, model, spec, true);
    generator_ = (*backend_.loaded)->open_generator(file, backend_.requested);
  } catch (const std::exception& e) {
    throw Error(describe_variant(model, spec) + ": " + e.what());
  }
  load_ms_ = static_cast<double>(mono_now_ns() - started) * 1e-6;
  start_scheduler(model);
}

GenerationEngine::GenerationEngine(std::unique_ptr<Generator> generator, const ModelSpec& model, const VariantSpec& spec,
                                   GenerationMetrics metrics)
    : spec_(spec), metrics_(metrics), generator_(std::move(generator)) {
  backend_.model_name = model.name;
  backend_.info.name = spec.backend;
  start_scheduler(model);
}

void GenerationEngine::start_scheduler(const ModelSpec& model) {
  generation::SchedulerListener listener;
  listener.queue_depth = [pending = metrics_.pending](std::size_t queued) { pending->Set(static_cast<double>(queued)); };
  listener.running = [active = metrics_.active_sequences](std::size_t running) { active->Set(static_cast<double>(running)); };
  scheduler_ = std::make_unique<generation::GenerationScheduler>(*generator_, model.max_queue, std::move(listener));
}

ServedVariant GenerationEngine::description() const {
  ServedVariant d{backend_.model_name,
                  backend_.model_file,
                  spec_.name,
                  backend_.info,
                  backend_.requested,
                  generator_->effective_settings(),
                  {},
                  {},
                  load_ms_,
                  {},
                  std::nullopt};
  d.serving.weight = spec_.weight;
  d.serving.sequence_slots = generator_->max_slots();
  d.serving.context_per_sequence = generator_->context_length();
  d.batching = "continuous (requests join and leave the running batch at every step)";
  return d;
}

GenerationEngine::~GenerationEngine() { scheduler_.reset(); }

void GenerationEngine::close() { scheduler_->close(); }

bool GenerationEngine::submit(GenerationRequest request) {
  return scheduler_->submit(
      std::make_unique<TextSequence>(std::move(request), *generator_, metrics_, traffic_, spec_.backend, reused_counted_));
}

}  // namespace infermark::serve

#include "loadgen/generation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace infermark::loadgen {

int LengthDistribution::draw(SeededRandom& random, int max) const {
  const double value = stddev > 0 ? mean + stddev * random.normal() : mean;
  return std::clamp(static_cast<int>(std::lround(value)), 1, std::max(1, max));
}

std::string LengthDistribution::describe() const {
  return stddev > 0 ? fmt::format("{:g} ± {:g}", mean, stddev) : fmt::format("{:g}", mean);
}

void check_generation_spec(const GenerationSpec& spec, const Generator& generator) {
  if (spec.concurrency < 1) throw Error("--concurrency " + std::to_string(spec.concurrency) + ": must be at least 1");
  if (spec.concurrency > generator.max_slots())
    throw Error(fmt::format("--concurrency {}: the generator was opened with {} sequence slots", spec.concurrency,
                            generator.max_slots()));
  if (spec.prompt_tokens.mean < 1 || spec.output_tokens.mean < 1)
    throw Error("--prompt-tokens/--output-tokens: must be at least 1");
  // A fixed length must fit as asked; drawn lengths are clamped to what fits.
  const double longest = spec.prompt_tokens.mean + spec.output_tokens.mean;
  if (longest > generator.context_length())
    throw Error(fmt::format("--prompt-tokens {} + --output-tokens {} = {} tokens: longer than the model's context of {} tokens",
                            spec.prompt_tokens.mean, spec.output_tokens.mean, longest, generator.context_length()));
  if (generator.prompt_vocabulary().empty()) throw Error("the model's vocabulary has no ordinary tokens to build prompts from");
}

namespace {

struct Draws {
  int prompt = 0, output = 0;
};

// Requests are drawn in issue order from one seeded stream, so every backend and concurrency
// level sees the same sequence of lengths and prompt tokens.
class RequestSource {
 public:
  RequestSource(const GenerationSpec& spec, const Generator& generator)
      : spec_(spec), random_(spec.seed), vocabulary_(generator.prompt_vocabulary()), context_(generator.context_length()) {}

  std::pair<std::vector<TokenId>, int> next() {
    const int prompt_length = spec_.prompt_tokens.draw(random_, context_ - 1);
    const int output_length = spec_.output_tokens.draw(random_, context_ - prompt_length);
    std::vector<TokenId> prompt(static_cast<std::size_t>(prompt_length));
    for (auto& token : prompt) token = vocabulary_[random_.next() % vocabulary_.size()];
    return {std::move(prompt), output_length};
  }

 private:
  const GenerationSpec& spec_;
  SeededRandom random_;
  std::vector<TokenId> vocabulary_;
  int context_;
};

struct ActiveSequence {
  RequestRecord record;
  int target = 0;
  bool recorded = false;
};

// Keeps `concurrency` sequences in flight until `total` requests have completed.
class BatchScheduler {
 public:
  BatchScheduler(Generator& generator, RequestSource& source, int concurrency)
      : generator_(generator), source_(source), slots_(static_cast<std::size_t>(concurrency)) {}

  // Returns false when stopped early (stop flag or deadline).
  bool run(std::uint64_t total, bool record, std::int64_t deadline_ns, const std::atomic<bool>* stop,
           GenerationOutcome& outcome) {
    std::uint64_t issued = 0, completed = 0;
    while (completed < total) {
      for (std::size_t slot = 0; slot < slots_.size() && issued < total; ++slot)
        if (!slots_[slot]) {
          start(static_cast<int>(slot), record);
          ++issued;
        }
      if ((stop && stop->load()) || (deadline_ns > 0 && mono_now_ns() > deadline_ns)) {
        drain();
        return false;
      }
      generator_.step([&](const GeneratedToken& token) {
        auto& sequence = slots_.at(static_cast<std::size_t>(token.slot));
        if (sequence) sequence->record.token_ns.push_back(mono_now_ns());
      });
      if (record) ++outcome.steps;
      for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
        auto& sequence = slots_[slot];
        if (!sequence || static_cast<int>(sequence->record.token_ns.size()) < sequence->target) continue;
        generator_.finish(static_cast<int>(slot));
        if (sequence->recorded) outcome.requests.push_back(std::move(sequence->record));
        sequence.reset();
        ++completed;
      }
    }
    return true;
  }

 private:
  void start(int slot, bool record) {
    auto [prompt, output] = source_.next();
    ActiveSequence sequence;
    sequence.record.prompt_tokens = static_cast<int>(prompt.size());
    sequence.record.output_tokens = output;
    sequence.record.token_ns.reserve(static_cast<std::size_t>(output));
    sequence.target = output;
    sequence.recorded = record;
    sequence.record.start_ns = mono_now_ns();
    generator_.start(slot, prompt, output);
    slots_[static_cast<std::size_t>(slot)] = std::move(sequence);
  }

  // Frees every slot still in flight (an early stop keeps only completed requests).
  void drain() {
    for (std::size_t slot = 0; slot < slots_.size(); ++slot)
      if (slots_[slot]) {
        generator_.finish(static_cast<int>(slot));
        slots_[slot].reset();
      }
  }

  Generator& generator_;
  RequestSource& source_;
  std::vector<std::optional<ActiveSequence>> slots_;
};

}  // namespace

GenerationOutcome run_generation(Generator& generator, const GenerationSpec& spec, const std::atomic<bool>* stop) {
  check_generation_spec(spec, generator);
  RequestSource source(spec, generator);
  BatchScheduler scheduler(generator, source, spec.concurrency);
  GenerationOutcome outcome;
  if (!scheduler.run(spec.warmup_requests, false, 0, stop, outcome)) {
    outcome.interrupted = true;
    return outcome;
  }
  outcome.measured_from_ns = mono_now_ns();
  const auto deadline = outcome.measured_from_ns + static_cast<std::int64_t>(spec.max_duration_s * 1e9);
  if (!scheduler.run(spec.requests, true, deadline, stop, outcome)) {
    outcome.interrupted = stop && stop->load();
    outcome.hit_duration_cap = !outcome.interrupted;
  }
  if (!outcome.requests.empty()) {
    std::int64_t first = outcome.requests.front().start_ns, last = 0;
    for (const auto& r : outcome.requests) {
      first = std::min(first, r.start_ns);
      last = std::max(last, r.token_ns.back());
    }
    outcome.wall_s = static_cast<double>(last - first) * 1e-9;
  }
  return outcome;
}

}  // namespace infermark::loadgen

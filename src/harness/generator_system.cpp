#include "harness/generator_system.hpp"

#include <future>

#include "core/error.hpp"

namespace infermark::harness {
namespace {

// One lane's query: stamps each token's arrival on its completion and is complete at the prompt's
// output length (end-of-sequence is ignored, so output lengths are what was asked).
class TimedSequence final : public generation::Sequence {
 public:
  TimedSequence(const PromptSample& prompt, loadgen::Completion& completion, std::promise<std::string> outcome)
      : prompt_(prompt), completion_(completion), outcome_(std::move(outcome)) {}

  const std::vector<TokenId>& prompt() const override { return prompt_.tokens; }
  int max_tokens() const override { return prompt_.output_tokens; }
  bool on_token(TokenId /*token*/, std::int64_t now_ns) override {
    completion_.token_ns.push_back(now_ns);
    return static_cast<int>(completion_.token_ns.size()) >= prompt_.output_tokens;
  }
  void on_end(generation::SequenceEnd end, const std::string& error) override {
    outcome_.set_value(end == generation::SequenceEnd::kStepFailed ? "generation step failed: " + error : error);
  }

 private:
  const PromptSample& prompt_;
  loadgen::Completion& completion_;
  std::promise<std::string> outcome_;  // "" when every token came
};

int checked_lanes(const Generator& generator, int lanes) {
  if (lanes > generator.max_slots())
    throw Error("--concurrency " + std::to_string(lanes) + ": the generator was opened with " +
                std::to_string(generator.max_slots()) + " sequence slots");
  return std::max(lanes, 1);
}

}  // namespace

GeneratorSystem::GeneratorSystem(Generator& generator, const PromptLibrary& prompts, int lanes)
    : prompts_(prompts),
      lanes_(checked_lanes(generator, lanes)),
      prefixes_(static_cast<int>(prompts.prefix_groups())),
      scheduler_(generator) {}

void GeneratorSystem::issue(int /*lane*/, const loadgen::Query& query, loadgen::Completion& completion) {
  const auto& prompt = prompts_.at(query.sample);
  completion.prompt_tokens = static_cast<int>(prompt.tokens.size());
  completion.prefix = prefixes_.on_issue(prompt.prefix_group);
  completion.token_ns.reserve(static_cast<std::size_t>(prompt.output_tokens));
  std::promise<std::string> outcome;
  auto error = outcome.get_future();
  // Lanes never outnumber slots, so the queue holds at most one request per lane and never refuses.
  if (!scheduler_.submit(std::make_unique<TimedSequence>(prompt, completion, std::move(outcome))))
    throw Error("internal error: the generation scheduler refused a request");
  if (const auto message = error.get(); !message.empty()) throw Error(message);
}

}  // namespace infermark::harness

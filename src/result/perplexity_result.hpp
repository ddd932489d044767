// Perplexity of a language model on a text (`infermark run MODEL.gguf --perplexity-text FILE`):
// the figure, how many tokens it rests on, and where the text came from. Part of a result's
// `generation` section (docs/result-schema.md, "generation.perplexity").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include <string>
#include <vector>

namespace infermark::result {

struct PerplexityResult {
  double perplexity = 0;        // exp(mean negative log-likelihood per scored token)
  long long tokens_scored = 0;  // predictions the figure averages
  long long text_tokens = 0;    // the whole text, tokenized by the model's own tokenizer
  int window = 0;               // tokens per evaluated window; the second half of each is scored
  int windows = 0;
  std::string source;  // the text file as given
  long long text_bytes = 0;
  double wall_s = 0;  // time to score every window
  // Greedy continuations of the first windows' context halves: engines and precisions of one model
  // are compared token by token on them (the report's agreement column). Empty in older results.
  int continuation_tokens = 0;                         // new tokens per continuation
  std::vector<std::vector<int>> continuations;         // one per window, the generated token ids
  std::vector<std::vector<int>> continuation_prompts;  // their prompts, so only equal prompts are compared
};

// How a continuation set agrees with a reference set on the prompts both cut alike: the share of
// equal tokens position by position, and the earliest position where any continuation differs (none: -1).
struct GreedyAgreement {
  double identical_share = 0;
  int first_divergence = -1;
  int tokens = 0;
  int continuations = 0;  // compared: those whose prompts were equal
};

// nullopt when no continuation of the two results had the same prompt (other texts or tokenizers).
std::optional<GreedyAgreement> greedy_agreement(const PerplexityResult& candidate, const PerplexityResult& reference);

nlohmann::json to_json(const PerplexityResult& p);
PerplexityResult perplexity_from(const nlohmann::json& j);

}  // namespace infermark::result

// Perplexity of a language model on a text (`infermark run MODEL.gguf --perplexity-text FILE`):
// the figure, how many tokens it rests on, and where the text came from. Part of a result's
// `generation` section (docs/result-schema.md, "generation.perplexity").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

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
};

nlohmann::json to_json(const PerplexityResult& p);
PerplexityResult perplexity_from(const nlohmann::json& j);

}  // namespace infermark::result

// Where an LLM workload's prompt tokens come from: seeded draws over the model's ordinary
// vocabulary (the default), or windows of a real text (`--dataset FILE`) tokenized once by the
// model's own tokenizer, so a prompt of N tokens is exactly N tokens of real text for that model.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "backends/generator.hpp"
#include "core/random.hpp"

namespace infermark::harness {

class TokenSource {
 public:
  // Throws infermark::Error when the model's vocabulary has no ordinary tokens.
  static TokenSource vocabulary(const Generator& generator);
  // Throws infermark::Error naming --dataset when the file cannot be read or gives fewer than 2 tokens.
  static TokenSource corpus(const Generator& generator, const std::filesystem::path& text);

  // `count` tokens: each drawn from the vocabulary, or the corpus's tokens from a drawn offset on
  // (continuing from its start when the end is reached).
  std::vector<TokenId> take(int count, SeededRandom& random) const;
  // "the model's ordinary vocabulary (seeded draws)", "corpus GPL-3: 8123 tokens by the model's tokenizer, ..."
  const std::string& describe() const { return description_; }

 private:
  TokenSource(std::vector<TokenId> tokens, bool windows, std::string description)
      : tokens_(std::move(tokens)), windows_(windows), description_(std::move(description)) {}
  std::vector<TokenId> tokens_;
  bool windows_;  // consecutive windows of a text, not independent draws
  std::string description_;
};

}  // namespace infermark::harness

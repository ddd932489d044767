// The words `load`'s prompts are made of: common short English words drawn one by one (about one
// token each for ordinary tokenizers), or windows of a real text's words (`--dataset FILE`). The
// server's usage gives the real token count either way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/random.hpp"

namespace infermark::remote {

class PromptWords {
 public:
  static PromptWords common();
  // Throws infermark::Error naming --dataset when the file cannot be read or holds no word.
  static PromptWords corpus(const std::filesystem::path& text);

  // `count` words joined by spaces: each drawn, or the text's from a drawn word on (continuing
  // from its start when the end is reached).
  std::string take(int count, SeededRandom& random) const;
  const std::string& describe() const { return description_; }

 private:
  PromptWords(std::vector<std::string> words, std::string description)
      : words_(std::move(words)), description_(std::move(description)) {}
  std::vector<std::string> words_;  // empty: the common words
  std::string description_;
};

}  // namespace infermark::remote

#include "remote/prompt_words.hpp"

#include <sstream>

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace infermark::remote {
namespace {

// Common short words: ordinary tokenizers give each about one token.
constexpr const char* kWords[] = {"the",  "of",    "and",   "to",    "in",   "is",    "it",   "that", "for",   "you",   "was",
                                  "with", "on",    "as",    "have",  "but",  "be",    "they", "at",   "one",   "this",  "from",
                                  "or",   "had",   "by",    "word",  "what", "all",   "were", "we",   "when",  "your",  "can",
                                  "said", "there", "use",   "an",    "each", "which", "she",  "do",   "how",   "their", "if",
                                  "will", "up",    "other", "about", "out",  "many",  "then", "them", "these", "so",    "some",
                                  "her",  "would", "make",  "like",  "him",  "into",  "time", "has",  "look"};

}  // namespace

PromptWords PromptWords::common() { return PromptWords({}, "synthetic: common English words"); }

PromptWords PromptWords::corpus(const std::filesystem::path& text) {
  std::istringstream in(read_text_file(text, "--dataset"));
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  if (words.empty()) throw Error("--dataset " + text.string() + ": holds no words to cut prompts from");
  auto description = fmt::format("corpus {}: {} words; each prompt a window of words from a seeded offset",
                                 text.filename().string(), words.size());
  return PromptWords(std::move(words), std::move(description));
}

std::string PromptWords::take(int count, SeededRandom& random) const {
  std::string text;
  auto at = words_.empty() ? 0 : static_cast<std::size_t>(random.next() % words_.size());
  for (int w = 0; w < count; ++w) {
    if (w > 0) text += ' ';
    if (words_.empty()) {
      text += kWords[random.next() % std::size(kWords)];
    } else {
      text += words_[at];
      at = (at + 1) % words_.size();
    }
  }
  return text;
}

}  // namespace infermark::remote

#include "harness/token_source.hpp"

#include <unordered_set>

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace infermark::harness {

TokenSource TokenSource::vocabulary(const Generator& generator) {
  auto tokens = generator.prompt_vocabulary();
  if (tokens.empty()) throw Error("the model's vocabulary has no ordinary tokens to build prompts from");
  return TokenSource(std::move(tokens), false, "the model's ordinary vocabulary (seeded draws)");
}

TokenSource TokenSource::corpus(const Generator& generator, const std::filesystem::path& text) {
  const auto bytes = read_text_file(text, "--dataset");
  // Only ordinary tokens, as drawn prompts have: not the BOS the tokenizer adds, nor byte or control tokens.
  const auto ordinary = generator.prompt_vocabulary();
  const std::unordered_set<TokenId> allowed(ordinary.begin(), ordinary.end());
  std::vector<TokenId> tokens;
  for (const auto token : generator.tokenize(bytes))
    if (allowed.count(token)) tokens.push_back(token);
  if (tokens.size() < 2)
    throw Error(fmt::format("--dataset {}: {} tokens by the model's tokenizer, too few to cut prompts from", text.string(),
                            tokens.size()));
  auto description = fmt::format(
      "corpus {}: {} bytes, {} ordinary tokens by the model's own tokenizer; each prompt a window from a seeded offset",
      text.filename().string(), bytes.size(), tokens.size());
  return TokenSource(std::move(tokens), true, std::move(description));
}

std::vector<TokenId> TokenSource::take(int count, SeededRandom& random) const {
  std::vector<TokenId> taken(static_cast<std::size_t>(std::max(count, 0)));
  if (!windows_) {
    for (auto& token : taken) token = tokens_[random.next() % tokens_.size()];
    return taken;
  }
  auto at = static_cast<std::size_t>(random.next() % tokens_.size());
  for (auto& token : taken) {
    token = tokens_[at];
    at = (at + 1) % tokens_.size();
  }
  return taken;
}

}  // namespace infermark::harness

#include "result/perplexity_result.hpp"

#include <algorithm>

namespace infermark::result {

nlohmann::json to_json(const PerplexityResult& p) {
  return {{"perplexity", p.perplexity},
          {"tokens_scored", p.tokens_scored},
          {"text_tokens", p.text_tokens},
          {"window", p.window},
          {"windows", p.windows},
          {"source", p.source},
          {"text_bytes", p.text_bytes},
          {"wall_s", p.wall_s},
          {"method", "each window's first half is context, its second half scored (as llama-perplexity does)"},
          {"continuation_tokens", p.continuation_tokens},
          {"continuations", p.continuations},
          {"continuation_prompts", p.continuation_prompts}};
}

std::optional<GreedyAgreement> greedy_agreement(const PerplexityResult& candidate, const PerplexityResult& reference) {
  GreedyAgreement agreement;
  int equal = 0;
  const auto pairs = std::min({candidate.continuations.size(), reference.continuations.size(),
                               candidate.continuation_prompts.size(), reference.continuation_prompts.size()});
  for (std::size_t c = 0; c < pairs; ++c) {
    // Tokenizers of one vocabulary can still cut a text differently: only equal prompts compare.
    if (candidate.continuation_prompts[c] != reference.continuation_prompts[c]) continue;
    const auto& ours = candidate.continuations[c];
    const auto& theirs = reference.continuations[c];
    const auto length = std::min(ours.size(), theirs.size());
    for (std::size_t i = 0; i < length; ++i) {
      if (ours[i] == theirs[i]) {
        ++equal;
      } else if (agreement.first_divergence < 0 || static_cast<int>(i) < agreement.first_divergence) {
        agreement.first_divergence = static_cast<int>(i);
      }
    }
    agreement.tokens += static_cast<int>(length);
    ++agreement.continuations;
  }
  if (agreement.continuations == 0) return std::nullopt;
  agreement.identical_share = agreement.tokens > 0 ? static_cast<double>(equal) / agreement.tokens : 0.0;
  return agreement;
}

PerplexityResult perplexity_from(const nlohmann::json& j) {
  PerplexityResult p;
  p.perplexity = j.value("perplexity", 0.0);
  p.tokens_scored = j.value("tokens_scored", 0LL);
  p.text_tokens = j.value("text_tokens", 0LL);
  p.window = j.value("window", 0);
  p.windows = j.value("windows", 0);
  p.source = j.value("source", "");
  p.text_bytes = j.value("text_bytes", 0LL);
  p.wall_s = j.value("wall_s", 0.0);
  p.continuation_tokens = j.value("continuation_tokens", 0);
  p.continuations = j.value("continuations", std::vector<std::vector<int>>{});
  p.continuation_prompts = j.value("continuation_prompts", std::vector<std::vector<int>>{});
  return p;
}

}  // namespace infermark::result

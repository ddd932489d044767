#include "result/perplexity_result.hpp"

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
          {"method", "each window's first half is context, its second half scored (as llama-perplexity does)"}};
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
  return p;
}

}  // namespace infermark::result

// Quality loss of a language-model cell, for `recommend --max-accuracy-loss` and the LLM table:
// how much higher its perplexity is than that of a higher-precision cell of the same model family
// (report/model_families) scored on the same text on the same machine (docs/llm.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

struct PerplexityLoss {
  double perplexity = 0.0;
  double reference_perplexity = 0.0;
  std::string reference_label;     // "smollm2-135m on llamacpp"
  long long tokens = 0;            // the text as this cell's tokenizer cut it
  long long reference_tokens = 0;  // ... and the reference's
  bool is_reference = false;       // this cell is its family's full-precision cell on its engine
  bool other_engine = false;       // no higher-precision cell on this cell's engine: another engine's

  // Perplexity above the reference, as a fraction (0.258: 25.8% higher; negative when lower).
  double increase() const { return reference_perplexity > 0 ? perplexity / reference_perplexity - 1.0 : 0.0; }
  // "perplexity 26.19 vs 20.82 of smollm2-135m on llamacpp (+25.8%); same text, same token count"
  std::string describe() const;
};

// For each result with a perplexity: its loss against the family's reference on the same text
// (nullopt for the others, and where no reference exists). The reference is the cell's own
// engine's highest-precision cell (FP32 or as exported first, then FP16), the cell itself when it
// is one; for a reduced-precision cell with none on its engine, another engine's higher-precision
// cell (tokenizers may cut the text differently: the token counts say so).
std::vector<std::optional<PerplexityLoss>> perplexity_losses(const std::vector<const result::RunResult*>& results);

// Above this increase a reduced precision's quality loss is called large in the LLM table.
constexpr double kLargePerplexityIncrease = 0.10;

}  // namespace infermark::report

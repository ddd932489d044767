#include "report/perplexity_loss.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "report/machine.hpp"
#include "report/model_families.hpp"

namespace infermark::report {
namespace {

// 0 full precision (FP32, or the file as exported), 1 FP16, 2 anything quantized.
int precision_rank(const result::RunResult& r) {
  switch (parse_variant_name(r.model.name).precision) {
    case ZooPrecision::kAsExported:
    case ZooPrecision::kFp32:
      return 0;
    case ZooPrecision::kFp16:
      return 1;
    default:
      return 2;
  }
}

const result::PerplexityResult* perplexity_of(const result::RunResult& r) {
  return r.generation && r.generation->perplexity ? &*r.generation->perplexity : nullptr;
}

// The same family on the same machine, scored on the same text (file name and size).
bool comparable(const result::RunResult& a, const result::RunResult& b) {
  const auto *pa = perplexity_of(a), *pb = perplexity_of(b);
  return pa && pb && same_family_on_one_machine(a, b) &&
         std::filesystem::path(pa->source).filename() == std::filesystem::path(pb->source).filename() &&
         pa->text_bytes == pb->text_bytes;
}

// The comparable cell of lowest precision rank (first found on ties), on `backend` or on any when empty.
const result::RunResult* best_reference(const std::vector<const result::RunResult*>& results, const result::RunResult& cell,
                                        const std::string& backend) {
  const result::RunResult* best = nullptr;
  for (const auto* candidate : results) {
    if (!comparable(*candidate, cell) || (!backend.empty() && candidate->backend.name != backend)) continue;
    if (!best || precision_rank(*candidate) < precision_rank(*best)) best = candidate;
  }
  return best;
}

}  // namespace

std::string PerplexityLoss::describe() const {
  if (is_reference) return fmt::format("perplexity {:.2f}: 0 for the family's full-precision cell on this engine", perplexity);
  const auto tokens_note = tokens == reference_tokens
                               ? std::string("same text, same token count")
                               : fmt::format("same text cut into {} and {} tokens", tokens, reference_tokens);
  return fmt::format("perplexity {:.2f} vs {:.2f} of {} ({:+.1f}%){}; {}", perplexity, reference_perplexity, reference_label,
                     increase() * 100.0, other_engine ? ", another engine" : "", tokens_note);
}

std::vector<std::optional<PerplexityLoss>> perplexity_losses(const std::vector<const result::RunResult*>& results) {
  std::vector<std::optional<PerplexityLoss>> losses;
  for (const auto* cell : results) {
    losses.emplace_back();
    const auto* own = perplexity_of(*cell);
    if (!own) continue;
    const int rank = precision_rank(*cell);
    const result::RunResult* reference = nullptr;
    bool other_engine = false;
    if (rank == 0) {
      reference = cell;
    } else if (const auto* same = best_reference(results, *cell, cell->backend.name); same && precision_rank(*same) < rank) {
      reference = same;
    } else if (const auto* any = best_reference(results, *cell, ""); any && precision_rank(*any) < rank) {
      reference = any;
      other_engine = true;
    }
    if (!reference) continue;
    const auto& ref = *perplexity_of(*reference);
    losses.back() = PerplexityLoss{own->perplexity,  ref.perplexity,  reference->model.name + " on " + reference->backend.name,
                                   own->text_tokens, ref.text_tokens, reference == cell,
                                   other_engine};
  }
  return losses;
}

}  // namespace infermark::report

// Which figure of an output's agreement with the reference backend judges it, by the output's kind
// (core/output_kind, from the zoo manifest): top-1 agreement for class scores, top-1 per step for
// per-step class scores (OCR), mean vector cosine for embeddings, whole-tensor cosine otherwise.
// Without a kind: mean vector cosine for outputs of rank >= 3, else top-1, else cosine.
#pragma once

#include <optional>
#include <string>

#include "core/output_kind.hpp"
#include "stats/output_agreement.hpp"

namespace infermark::stats {

enum class AgreementMeasure { kTop1, kStepTop1, kVectorCosine, kCosine };

// "top-1 agreement", "per-step top-1 agreement", "mean vector cosine", "cosine similarity"
std::string agreement_measure_name(AgreementMeasure measure);

struct AgreementFigure {
  double agreement = 0.0;  // 1 when identical
  AgreementMeasure measure = AgreementMeasure::kCosine;
};

AgreementFigure agreement_figure(const stats::OutputAgreement& output, std::optional<OutputKind> kind);

// The agreement column's text: "97.0%", "97.0% per step", "cos 0.99990 (min 0.9950)", "cos 0.99990";
// "-" when an output without a kind has neither vectors nor classes (as before kinds existed).
std::string agreement_text(const stats::OutputAgreement& output, std::optional<OutputKind> kind);

}  // namespace infermark::stats

#include "stats/agreement_measure.hpp"

#include <fmt/format.h>

#include "core/named_enum.hpp"

namespace infermark::stats {
namespace {

AgreementFigure by_rank(const stats::OutputAgreement& o) {
  if (o.vector_cosine_mean) return {*o.vector_cosine_mean, AgreementMeasure::kVectorCosine};
  if (o.top1_agreement) return {*o.top1_agreement, AgreementMeasure::kTop1};
  return {o.cosine_similarity, AgreementMeasure::kCosine};
}

constexpr NamedValue<AgreementMeasure> kMeasures[] = {{AgreementMeasure::kTop1, "top-1 agreement"},
                                                      {AgreementMeasure::kStepTop1, "per-step top-1 agreement"},
                                                      {AgreementMeasure::kVectorCosine, "mean vector cosine"},
                                                      {AgreementMeasure::kCosine, "cosine similarity"}};

}  // namespace

std::string agreement_measure_name(AgreementMeasure measure) { return std::string(name_in(kMeasures, measure)); }

AgreementFigure agreement_figure(const stats::OutputAgreement& o, std::optional<OutputKind> kind) {
  if (!kind) return by_rank(o);
  switch (*kind) {
    case OutputKind::kClassScores:
      if (o.top1_agreement) return {*o.top1_agreement, AgreementMeasure::kTop1};
      break;
    case OutputKind::kSequenceClassScores:
      if (o.top1_agreement) return {*o.top1_agreement, AgreementMeasure::kStepTop1};
      break;
    case OutputKind::kEmbedding:
      if (o.vector_cosine_mean) return {*o.vector_cosine_mean, AgreementMeasure::kVectorCosine};
      break;
    case OutputKind::kOther:
      break;
  }
  return {o.cosine_similarity, AgreementMeasure::kCosine};
}

std::string agreement_text(const stats::OutputAgreement& o, std::optional<OutputKind> kind) {
  const auto figure = agreement_figure(o, kind);
  if (figure.measure == AgreementMeasure::kVectorCosine)
    return fmt::format("cos {:.5f} (min {:.4f})", figure.agreement, o.vector_cosine_min.value_or(figure.agreement));
  if (figure.measure == AgreementMeasure::kTop1) return fmt::format("{:.1f}%", figure.agreement * 100);
  if (figure.measure == AgreementMeasure::kStepTop1) return fmt::format("{:.1f}% per step", figure.agreement * 100);
  return kind ? fmt::format("cos {:.5f}", figure.agreement) : std::string("-");
}

}  // namespace infermark::stats

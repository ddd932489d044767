#include "serve/shadow_judge.hpp"

#include <algorithm>
#include <cmath>

#include "stats/agreement_measure.hpp"

namespace infermark::serve {

bool disagrees(const stats::OutputAgreement& agreement, std::optional<OutputKind> kind, const ShadowTolerance& tolerance) {
  if (!agreement.comparable) return true;
  const auto figure = stats::agreement_figure(agreement, kind);
  switch (figure.measure) {
    case stats::AgreementMeasure::kTop1:
    case stats::AgreementMeasure::kStepTop1:
      return !(figure.agreement >= 1.0);  // any row (or step) whose top class differs
    case stats::AgreementMeasure::kVectorCosine:
      return !(figure.agreement >= tolerance.min_cosine);  // written so a NaN disagrees
    case stats::AgreementMeasure::kCosine:
      break;
  }
  // Whole-tensor cosine: meaningful for an embedding of one vector per row; for scores it hides
  // any error that keeps the sign, so they are held to the absolute tolerance.
  if (kind == OutputKind::kEmbedding) return !(figure.agreement >= tolerance.min_cosine);
  // A NaN output: the largest error passes over it, the cosine does not.
  return std::isnan(figure.agreement) || !(agreement.max_abs_error <= tolerance.max_abs_error);
}

ShadowVerdict ShadowJudge::judge(const std::vector<Tensor>& primary, const std::vector<Tensor>& shadow) const {
  ShadowVerdict verdict;
  for (const auto& agreement : stats::compare_outputs(primary, shadow)) {
    verdict.max_abs_error = std::max(verdict.max_abs_error, agreement.max_abs_error);
    verdict.disagreed = verdict.disagreed || disagrees(agreement, kind_of(kinds_, agreement.output), tolerance_);
  }
  return verdict;
}

}  // namespace infermark::serve

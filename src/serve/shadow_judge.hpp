// Whether a shadow variant's answer to a mirrored request disagrees with the answer the client
// got. Each output is judged by the measure its kind calls for, chosen as the cross-check chooses
// it (report/agreement_measure): class scores by top-1, embeddings by cosine against a threshold,
// anything else (a sigmoid score, a VAD probability, a regression) by an absolute tolerance, since
// top-1 is undefined there and the cosine of two positive scalars is always 1.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/output_kind.hpp"
#include "core/tensor.hpp"
#include "serve/serve_config.hpp"
#include "stats/output_agreement.hpp"

namespace infermark::serve {

struct ShadowVerdict {
  bool disagreed = false;
  double max_abs_error = 0;  // over every output compared
};

// One output: true when `agreement` fails the measure its kind (or, without one, its rank) calls for.
bool disagrees(const stats::OutputAgreement& agreement, std::optional<OutputKind> kind, const ShadowTolerance& tolerance);

// Judges a variant's outputs against its shadow's on the same request. `kinds`: output name ->
// kind, from the served model's manifest (empty: judged by rank, as the cross-check does).
class ShadowJudge {
 public:
  ShadowJudge(std::map<std::string, OutputKind> kinds, ShadowTolerance tolerance)
      : kinds_(std::move(kinds)), tolerance_(tolerance) {}

  ShadowVerdict judge(const std::vector<Tensor>& primary, const std::vector<Tensor>& shadow) const;

 private:
  std::map<std::string, OutputKind> kinds_;
  ShadowTolerance tolerance_;
};

}  // namespace infermark::serve

// A model and its reduced-precision files (report/model_families) side by side: every family whose
// cells span two or more model names, per machine and origin, ranked like a model's cells.
#pragma once

#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

std::vector<FamilyRecommendation> family_recommendations(const std::vector<ModelRecommendation>& models,
                                                         const Constraints& constraints);

}  // namespace infermark::report

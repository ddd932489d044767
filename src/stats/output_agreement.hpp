// How closely one backend's outputs match a reference backend's on identical inputs, so a
// framework that is fast but computes something else is visible next to its speed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace infermark::stats {

struct OutputAgreement {
  std::string output;      // output tensor name
  bool comparable = true;  // false when the output is missing or shapes differ
  std::string note;        // why it is not comparable
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double cosine_similarity = 0.0;        // 1 for identical directions; NaN-free (0 vectors give 1 if both 0)
  std::optional<double> top1_agreement;  // share of rows with the same argmax over the last axis (rank >= 2)
  // Outputs of rank >= 3 ([batch, tokens, hidden]: an embedding per token or step): the cosine of
  // each vector along the last axis with the reference's, mean and least over the vectors.
  std::optional<double> vector_cosine_mean;
  std::optional<double> vector_cosine_min;
};

// One entry per reference output, matched by name.
std::vector<OutputAgreement> compare_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate);

}  // namespace infermark::stats

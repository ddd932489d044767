// Accuracy against labels for a run whose input file has labels beside it (core/input_labels).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "stats/label_accuracy.hpp"

namespace infermark::harness {

// Nothing when no input file has labels; else top-1/top-5 of the labelled output (the labels
// file's "output", or the first output) against them. Throws infermark::Error naming the labels
// file when its output is missing or does not hold one row of class scores per label.
std::optional<stats::LabelAccuracy> check_labels(const std::map<std::string, std::string>& input_files,
                                                 const std::vector<Tensor>& outputs);

}  // namespace infermark::harness

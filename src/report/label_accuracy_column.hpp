// The "vs labels" column of run's and report's tables: top-1/top-5 accuracy against the labels
// that came with the inputs (core/input_labels), shown only when some cell has it.
#pragma once

#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

// True when at least one cell was judged against labels, so the column is worth a place.
bool any_label_accuracy(const std::vector<const result::RunResult*>& cells);

// "top-1 85.7%, top-5 100% (7)", or "n/a" where the cell's inputs had no labels.
std::string label_accuracy_cell(const result::RunResult& result);

inline constexpr const char* kLabelAccuracyTitle = "vs labels";

}  // namespace infermark::report

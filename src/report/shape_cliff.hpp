// The "dynamic shape cliff" (issue 8): a cell fed shapes drawn per query against the cell of
// the same model and backend fed one fixed shape. Shared by the study summary and `recommend`'s
// check of *AI model inference framework selection and practice guide*'s "dynamic shapes -> ONNX Runtime".
#pragma once

#include <optional>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

bool has_varying_shapes(const result::RunResult& result);

// The first measured fixed-shape cell of the same model and backend, or nullptr.
const result::RunResult* fixed_shape_counterpart(const result::RunResult& varying, const std::vector<LoadedResult>& results);

// Mean input elements per query of a fixed-shape cell.
double input_elements(const result::RunResult& fixed);

struct ShapeCliff {
  double slowdown = 0;                     // varying mean latency / fixed mean latency
  double work = 0;                         // varying mean input elements / fixed input elements (bucketing rounds sizes up)
  std::optional<double> per_unit_of_work;  // slowdown / work: the cost of the shape changes themselves
};

ShapeCliff shape_cliff(const result::RunResult& varying, const result::RunResult& fixed);

}  // namespace infermark::report

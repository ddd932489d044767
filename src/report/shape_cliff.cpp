#include "report/shape_cliff.hpp"

namespace infermark::report {
namespace {

bool measured(const result::RunResult& r) {
  return r.status == result::CellStatus::kOk && r.latency_ms && r.throughput.inferences_per_s > 0;
}

}  // namespace

bool has_varying_shapes(const result::RunResult& result) { return result.scenario.parameters.varying_shapes.has_value(); }

const result::RunResult* fixed_shape_counterpart(const result::RunResult& varying, const std::vector<LoadedResult>& results) {
  for (const auto& f : results)
    if (!has_varying_shapes(f.result) && measured(f.result) && f.result.model.name == varying.model.name &&
        f.result.backend.name == varying.backend.name)
      return &f.result;
  return nullptr;
}

double input_elements(const result::RunResult& fixed) {
  double elements = 0;
  for (const auto& t : fixed.scenario.inputs) elements += static_cast<double>(t.element_count());
  return elements;
}

ShapeCliff shape_cliff(const result::RunResult& varying, const result::RunResult& fixed) {
  ShapeCliff cliff;
  const double fixed_elements = input_elements(fixed);
  const double varying_elements = varying.scenario.parameters.varying_shapes->mean_input_elements;
  cliff.work = fixed_elements > 0 ? varying_elements / fixed_elements : 0;
  cliff.slowdown = varying.latency_ms->mean / fixed.latency_ms->mean;
  if (cliff.work > 0) cliff.per_unit_of_work = cliff.slowdown / cliff.work;
  return cliff;
}

}  // namespace infermark::report

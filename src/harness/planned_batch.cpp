#include "harness/planned_batch.hpp"

#include "core/npy.hpp"

namespace infermark::harness {

PlannedBatch planned_batch(const InputRequest& inputs) {
  for (const auto& [name, file] : inputs.files)
    if (const auto shape = read_npy_shape(file); !shape.empty()) return {shape.front(), "rows of --input " + name + "=" + file};
  for (const auto& [name, shape] : inputs.shape_overrides)
    if (!shape.empty()) return {shape.front(), "--shape " + name + "=" + format_shape(shape)};
  return {inputs.batch, ""};
}

std::string planned_batch_text(const InputRequest& inputs) {
  const auto batch = planned_batch(inputs);
  return "batch " + std::to_string(batch.rows) + (batch.source.empty() ? "" : " (" + batch.source + ")");
}

}  // namespace infermark::harness

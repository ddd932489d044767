#include "serve/triton_model_config.hpp"

#include "kserve/kserve_codec.hpp"

namespace infermark::serve {
namespace {

// With batching, Triton's dims leave out the batch dimension.
nlohmann::json config_tensors(const std::vector<TensorSpec>& specs, bool batched) {
  auto out = nlohmann::json::array();
  for (const auto& spec : specs) {
    std::vector<std::int64_t> dims(spec.shape.begin() + (batched && !spec.shape.empty() ? 1 : 0), spec.shape.end());
    out.push_back({{"name", spec.name}, {"data_type", kserve::triton_config_type(spec.dtype)}, {"dims", dims}});
  }
  return out;
}

}  // namespace

nlohmann::json triton_model_config(const ModelSpec& model, const Variant& variant) {
  const bool batched = variant.max_batch_rows() > 1;
  nlohmann::json config{{"name", model.name},
                        {"platform", "infermark_" + variant.backend().name},
                        {"backend", variant.backend().name},
                        {"max_batch_size", batched ? variant.max_batch_rows() : 0},
                        {"input", config_tensors(variant.inputs(), batched)},
                        {"output", config_tensors(variant.outputs(), batched)},
                        {"instance_group", {{{"count", variant.spec().instances}, {"kind", "KIND_CPU"}}}}};
  if (batched)
    config["dynamic_batching"] = {{"preferred_batch_size", model.batching.preferred_batch_sizes},
                                  {"max_queue_delay_microseconds", model.batching.max_queue_delay_us}};
  if (!variant.batching_note().empty()) config["parameters"] = {{"batching_note", {{"string_value", variant.batching_note()}}}};
  return config;
}

}  // namespace infermark::serve

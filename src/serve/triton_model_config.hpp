// A served model's configuration in Triton's model-config JSON (/v2/models/{m}/config), which
// Triton's clients and perf_analyzer read to learn the batch size and tensor shapes.
#pragma once

#include <nlohmann/json.hpp>

#include "serve/serve_config.hpp"
#include "serve/variant.hpp"

namespace infermark::serve {

nlohmann::json triton_model_config(const ModelSpec& model, const Variant& variant);

}  // namespace infermark::serve

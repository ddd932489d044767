// The KServe v2 / Triton documents both protocol fronts answer with: server metadata, model
// metadata, model statistics and the repository index, as the HTTP API's JSON. The gRPC front
// fills its messages from the same JSON through protobuf's JSON mapping, so the field names here
// are the protocol's (and Triton's model config, serve/triton_model_config.hpp, likewise).
#pragma once

#include <nlohmann/json.hpp>

#include "serve/model_repository.hpp"

namespace infermark::serve {

// {"name", "version", "extensions"}.
nlohmann::json server_metadata();
// {"name", "versions", "platform", "inputs", "outputs", "parameters": {"variants"}}: the tensors of
// `variant`, and every variant of the model with its backend, weight, batching and breaker state.
nlohmann::json model_metadata(const ServedModel& model, const Variant& variant);
// Triton's statistics extension for one model, summed over its variants.
nlohmann::json model_statistics(const ServedModel& model);
// [{"name", "version", "state", "reason"}] for every model.
nlohmann::json repository_index(const ModelRepository& repository);

}  // namespace infermark::serve

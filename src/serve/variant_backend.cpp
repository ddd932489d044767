#include "serve/variant_backend.hpp"

namespace infermark::serve {

VariantBackend load_variant_backend(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& variant,
                                    bool language_model) {
  VariantBackend backend;
  backend.loaded = registry.load(variant.backend);
  backend.info = (*backend.loaded)->info();
  backend.requested.intra_op_threads = variant.threads;
  backend.requested.extras = variant.options;
  if (language_model) {
    backend.requested.expected_concurrency = variant.slots;
    if (variant.context > 0) backend.requested.extras["ctx"] = std::to_string(variant.context);
  } else {
    backend.requested.precision = variant.precision;
  }
  backend.model_name = model.name;
  backend.model_file = variant_file(model, variant);
  return backend;
}

}  // namespace infermark::serve

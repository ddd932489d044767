// What every served variant starts from: its framework loaded, the options asked of it and the
// model file it serves (tensor variants and language-model engines alike).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "backends/registry.hpp"
#include "serve/serve_config.hpp"

namespace infermark::serve {

struct VariantBackend {
  std::unique_ptr<LoadedBackend> loaded;  // must outlive the sessions or generator opened from it
  BackendInfo info;
  SessionOptions requested;
  std::string model_name;
  std::filesystem::path model_file;
};

// Loads `variant.backend`. Language models get their sequence slots as the expected concurrency
// and their context per sequence; tensor models their precision. Throws what the registry throws.
VariantBackend load_variant_backend(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& variant,
                                    bool language_model);

}  // namespace infermark::serve

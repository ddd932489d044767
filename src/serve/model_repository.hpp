// The models a server holds, loaded at start: each with its variants and its router.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "serve/generation_engine.hpp"
#include "serve/serve_config.hpp"
#include "serve/variant.hpp"
#include "serve/variant_router.hpp"

namespace infermark::serve {

// A tensor model (variants, KServe v2) or a language model (generators, OpenAI API).
struct ServedModel {
  ModelSpec spec;
  std::vector<std::unique_ptr<Variant>> variants;             // tensor models, in the configuration's order
  std::vector<std::unique_ptr<GenerationEngine>> generators;  // language models (GGUF), same order
  std::unique_ptr<VariantRouter> router;

  bool is_language_model() const { return !generators.empty(); }
  // nullptr when there is no variant of that name.
  Variant* variant(std::string_view name) const;
  GenerationEngine* generator(std::string_view name) const;
  std::string variant_names() const;  // "ort, ov" for error messages
};

class ModelRepository {
 public:
  // Loads every variant of every model; throws infermark::Error naming the first that fails.
  ModelRepository(const BackendRegistry& registry, const ServeConfig& config, ServeMetrics& metrics);

  ServedModel* find(std::string_view name);
  const std::vector<std::unique_ptr<ServedModel>>& models() const { return models_; }
  std::string model_names() const;
  // Stops every variant taking requests; queued ones still finish.
  void close();

 private:
  std::vector<std::unique_ptr<ServedModel>> models_;
};

}  // namespace infermark::serve

// The models a server holds, loaded at start: each with its variants and its router.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/generation_engine.hpp"
#include "serve/serve_config.hpp"
#include "serve/serve_metrics.hpp"
#include "serve/variant.hpp"
#include "serve/variant_router.hpp"

namespace infermark::serve {

// The HTTP header that names the variant to serve a request (A/B tests pin a variant with it).
inline constexpr std::string_view kVariantHeader = "X-Model-Variant";

// What the transport says about where a request should go.
struct RouteHints {
  std::string_view variant;         // an explicitly named variant; "": none
  std::string_view variant_source;  // where that name came from ("X-Model-Variant"), for errors
  std::string_view version;         // the model version asked for; "" or "1": the model as a whole
  std::string_view sticky_key;      // the value of the model's sticky header; "": none
};

// The variant that serves a request (an index into `variants` or `generators`) and why.
struct VariantChoice {
  std::size_t index = 0;
  RouteChoice how = RouteChoice::kWeighted;
};

// A tensor model (variants, KServe v2) or a language model (generators, OpenAI API).
struct ServedModel {
  ModelSpec spec;
  std::vector<std::unique_ptr<Variant>> variants;             // tensor models, in the configuration's order
  std::vector<std::unique_ptr<GenerationEngine>> generators;  // language models (GGUF, *.genai), same order
  std::unique_ptr<VariantRouter> router;

  bool is_language_model() const { return !generators.empty(); }
  // nullptr when there is no variant of that name.
  Variant* variant(std::string_view name) const;
  GenerationEngine* generator(std::string_view name) const;
  std::string variant_names() const;  // "ort, ov" for error messages
  // The one routing rule of both APIs: the variant `hints` names (a version naming one counts),
  // else the sticky key's, else the weighted split. Throws kserve::RequestError: 400 for a named
  // variant the model lacks, 404 for a version it lacks.
  VariantChoice choose(const RouteHints& hints) const;

 private:
  std::optional<std::size_t> index_of(std::string_view name) const;
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

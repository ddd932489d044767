#include "serve/model_repository.hpp"

#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"

namespace infermark::serve {

Variant* ServedModel::variant(std::string_view name) const {
  for (const auto& v : variants)
    if (v->name() == name) return v.get();
  return nullptr;
}

GenerationEngine* ServedModel::generator(std::string_view name) const {
  for (const auto& g : generators)
    if (g->name() == name) return g.get();
  return nullptr;
}

std::optional<std::size_t> ServedModel::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i]->name() == name) return i;
  for (std::size_t i = 0; i < generators.size(); ++i)
    if (generators[i]->name() == name) return i;
  return std::nullopt;
}

VariantChoice ServedModel::choose(const RouteHints& hints) const {
  if (!hints.variant.empty()) {
    if (const auto index = index_of(hints.variant)) return {*index, RouteChoice::kHeader};
    throw kserve::RequestError(400, std::string(hints.variant_source) + ": model '" + spec.name + "' has no variant '" +
                                        std::string(hints.variant) + "' (variants: " + variant_names() + ")");
  }
  if (!hints.version.empty() && hints.version != "1") {
    if (const auto index = index_of(hints.version)) return {*index, RouteChoice::kVersion};
    throw kserve::RequestError(404, "model '" + spec.name + "' has no version '" + std::string(hints.version) +
                                        "' (versions: 1, or a variant: " + variant_names() + ")");
  }
  return {router->pick(hints.sticky_key), hints.sticky_key.empty() ? RouteChoice::kWeighted : RouteChoice::kSticky};
}

std::string ServedModel::variant_names() const {
  std::string names;
  for (const auto& v : variants) names += (names.empty() ? "" : ", ") + v->name();
  for (const auto& g : generators) names += (names.empty() ? "" : ", ") + g->name();
  return names;
}

ModelRepository::ModelRepository(const BackendRegistry& registry, const ServeConfig& config, ServeMetrics& metrics) {
  for (const auto& spec : config.models) {
    auto model = std::make_unique<ServedModel>();
    model->spec = spec;
    std::vector<double> weights;
    for (const auto& variant : spec.variants) {
      if (is_language_model(variant_file(spec, variant)))
        model->generators.push_back(
            std::make_unique<GenerationEngine>(registry, spec, variant, metrics.generation(spec.name, variant.name)));
      else
        model->variants.push_back(std::make_unique<Variant>(registry, spec, variant, metrics.variant(spec.name, variant.name)));
      weights.push_back(variant.weight);
    }
    if (!model->variants.empty() && !model->generators.empty())
      throw Error("model '" + spec.name +
                  "': its variants mix language models (GGUF, *.genai) and tensor models; serve them as two models");
    model->router = std::make_unique<VariantRouter>(weights);
    models_.push_back(std::move(model));
  }
}

ServedModel* ModelRepository::find(std::string_view name) {
  for (auto& model : models_)
    if (model->spec.name == name) return model.get();
  return nullptr;
}

std::string ModelRepository::model_names() const {
  std::string names;
  for (const auto& model : models_) names += (names.empty() ? "" : ", ") + model->spec.name;
  return names;
}

void ModelRepository::close() {
  for (auto& model : models_) {
    for (auto& variant : model->variants) variant->close();
    for (auto& generator : model->generators) generator->close();
  }
}

}  // namespace infermark::serve

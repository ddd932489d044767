#include "serve/model_repository.hpp"

#include "core/error.hpp"

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
      if (model_format(variant_file(spec, variant)) == "gguf")
        model->generators.push_back(
            std::make_unique<GenerationEngine>(registry, spec, variant, metrics.generation(spec.name, variant.name)));
      else
        model->variants.push_back(std::make_unique<Variant>(registry, spec, variant, metrics.variant(spec.name, variant.name)));
      weights.push_back(variant.weight);
    }
    if (!model->variants.empty() && !model->generators.empty())
      throw Error("model '" + spec.name + "': its variants mix language models (GGUF) and tensor models; serve them as two models");
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

#include "serve/serve_config.hpp"

#include <algorithm>
#include <set>

#include "backends/declared.hpp"
#include "core/yaml_fields.hpp"

namespace infermark::serve {
namespace {

std::filesystem::path resolve(const std::filesystem::path& path, const std::filesystem::path& base) {
  return path.empty() || path.is_absolute() ? path : base / path;
}

VariantSpec parse_variant(const YAML::Node& node, const std::string& where, const std::filesystem::path& base) {
  if (!node.IsMap()) throw Error(where + ": a variant maps name, backend, weight, ...");
  check_keys(node,
             {"name", "backend", "model", "precision", "threads", "instances", "slots", "context", "weight", "opt", "shadow"},
             where);
  VariantSpec variant;
  variant.backend = yaml_value<std::string>(node, "backend", "", where);
  if (variant.backend.empty()) throw Error(where + ": no 'backend'");
  variant.name = yaml_value<std::string>(node, "name", variant.backend, where);
  variant.model = resolve(yaml_value<std::string>(node, "model", "", where), base);
  variant.precision = yaml_value<std::string>(node, "precision", "fp32", where);
  variant.threads = yaml_value<int>(node, "threads", 0, where);
  variant.instances = yaml_value<int>(node, "instances", 1, where);
  variant.slots = yaml_value<int>(node, "slots", variant.slots, where);
  variant.context = yaml_value<int>(node, "context", 0, where);
  variant.weight = yaml_value<double>(node, "weight", 1.0, where);
  variant.options = yaml_options(node, "opt", where);
  if (const auto shadow = node["shadow"]) {
    const auto at = where + ": shadow";
    if (!shadow.IsMap()) throw Error(at + ": maps 'to' (a variant), 'share' (0..1), 'tolerance' and 'min_cosine'");
    check_keys(shadow, {"to", "share", "tolerance", "min_cosine"}, at);
    variant.shadow =
        ShadowSettings{yaml_value<std::string>(shadow, "to", "", at), yaml_value<double>(shadow, "share", 1.0, at), {}};
    auto& tolerance = variant.shadow->tolerance;
    tolerance.max_abs_error = yaml_value<double>(shadow, "tolerance", tolerance.max_abs_error, at);
    tolerance.min_cosine = yaml_value<double>(shadow, "min_cosine", tolerance.min_cosine, at);
  }
  return variant;
}

ModelSpec parse_model(const YAML::Node& node, const std::string& where, const std::filesystem::path& base) {
  if (!node.IsMap()) throw Error(where + ": a model maps name, file, variants, ...");
  check_keys(node,
             {"name", "file", "batching", "max_queue", "timeout_ms", "inline_below_us", "breaker", "sticky_header", "variants"},
             where);
  ModelSpec model;
  model.name = yaml_value<std::string>(node, "name", "", where);
  model.file = resolve(yaml_value<std::string>(node, "file", "", where), base);
  if (const auto batching = node["batching"]) {
    const auto at = where + ": batching";
    check_keys(batching, {"max_batch_size", "max_queue_delay_us", "preferred_batch_sizes"}, at);
    model.batching.max_batch_size = yaml_value<int>(batching, "max_batch_size", 0, at);
    model.batching.max_queue_delay_us = yaml_value<std::int64_t>(batching, "max_queue_delay_us", 0, at);
    model.batching.preferred_batch_sizes = yaml_value<std::vector<std::int64_t>>(batching, "preferred_batch_sizes", {}, at);
  }
  model.max_queue = yaml_value<std::size_t>(node, "max_queue", model.max_queue, where);
  model.timeout_ms = yaml_value<double>(node, "timeout_ms", 0.0, where);
  model.inline_below_us = yaml_value<double>(node, "inline_below_us", model.inline_below_us, where);
  if (const auto breaker = node["breaker"]) {
    const auto at = where + ": breaker";
    check_keys(breaker, {"trip_after", "cooldown_ms"}, at);
    model.breaker_trip_after = yaml_value<int>(breaker, "trip_after", model.breaker_trip_after, at);
    model.breaker_cooldown_ms = yaml_value<double>(breaker, "cooldown_ms", model.breaker_cooldown_ms, at);
  }
  model.sticky_header = yaml_value<std::string>(node, "sticky_header", model.sticky_header, where);
  const auto variants = node["variants"];
  if (!variants || !variants.IsSequence() || variants.size() == 0)
    throw Error(where + ": 'variants' lists at least one variant (backend, weight, ...)");
  for (std::size_t i = 0; i < variants.size(); ++i)
    model.variants.push_back(parse_variant(variants[i], where + ": variant " + std::to_string(i + 1), base));
  return model;
}

ServeConfig config_from(const YAML::Node& root, const std::filesystem::path& file) {
  const auto where = file.string();
  if (!root.IsMap() || !root["models"]) throw Error(where + ": a model repository file is a YAML mapping with 'models:'");
  check_keys(root, {"server", "models"}, where);
  ServeConfig config;
  if (const auto server = root["server"]) {
    const auto at = where + ": server";
    check_keys(server,
               {"host", "http_port", "grpc_port", "io_threads", "max_body_mb", "drain_s", "max_connections", "read_timeout_s",
                "idle_timeout_s", "write_timeout_s"},
               at);
    config.host = yaml_value<std::string>(server, "host", config.host, at);
    config.http_port = yaml_value<std::uint16_t>(server, "http_port", config.http_port, at);
    config.grpc_port = yaml_value<int>(server, "grpc_port", config.grpc_port, at);
    config.io_threads = yaml_value<int>(server, "io_threads", config.io_threads, at);
    config.max_body_mb = yaml_value<std::size_t>(server, "max_body_mb", config.max_body_mb, at);
    config.drain_s = yaml_value<double>(server, "drain_s", config.drain_s, at);
    config.max_connections = yaml_value<std::size_t>(server, "max_connections", config.max_connections, at);
    config.read_timeout_s = yaml_value<int>(server, "read_timeout_s", config.read_timeout_s, at);
    config.idle_timeout_s = yaml_value<int>(server, "idle_timeout_s", config.idle_timeout_s, at);
    config.write_timeout_s = yaml_value<int>(server, "write_timeout_s", config.write_timeout_s, at);
  }
  const auto models = root["models"];
  if (!models.IsSequence() || models.size() == 0) throw Error(where + ": 'models' lists at least one model");
  const auto base = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  for (std::size_t i = 0; i < models.size(); ++i)
    config.models.push_back(parse_model(models[i], where + ": model " + std::to_string(i + 1), base));
  validate(config);
  return config;
}

}  // namespace

std::filesystem::path variant_file(const ModelSpec& model, const VariantSpec& variant) {
  return variant.model.empty() ? model.file : variant.model;
}

std::string describe_variant(const ModelSpec& model, const VariantSpec& variant) {
  return "model '" + model.name + "', variant '" + variant.name + "' (" + variant.backend + ", " +
         variant_file(model, variant).string() + ")";
}

ServeConfig load_serve_config(const std::filesystem::path& file) {
  return config_from(load_yaml_file(file, "model repository file"), file);
}

ServeConfig parse_serve_config(const std::string& yaml, const std::filesystem::path& file) {
  return config_from(parse_yaml_text(yaml, file.string()), file);
}

void validate(const ServeConfig& config) {
  if (config.models.empty()) throw Error("no model to serve");
  if (config.io_threads < 0) throw Error("io_threads must not be negative (0 = one per core)");
  if (config.max_body_mb == 0) throw Error("max_body_mb must be at least 1");
  for (const auto& [name, seconds] :
       {std::pair{"read_timeout_s", config.read_timeout_s}, std::pair{"idle_timeout_s", config.idle_timeout_s},
        std::pair{"write_timeout_s", config.write_timeout_s}})
    if (seconds < 1) throw Error(std::string(name) + " must be at least 1 (seconds), got " + std::to_string(seconds));
  if (config.grpc_port < -1 || config.grpc_port > 65535)
    throw Error("grpc_port must be a port (0: any free port) or -1 (no gRPC), got " + std::to_string(config.grpc_port));
  if (config.grpc_port > 0 && config.grpc_port == config.http_port)
    throw Error("grpc_port and http_port are both " + std::to_string(config.grpc_port) + "; give them different ports");
  std::set<std::string> model_names;
  for (const auto& model : config.models) {
    const auto where = "model '" + model.name + "'";
    if (model.name.empty()) throw Error("a model has no 'name'");
    if (model.name.find('/') != std::string::npos) throw Error(where + ": a name must not contain '/'");
    if (!model_names.insert(model.name).second) throw Error(where + ": named twice");
    if (model.batching.max_batch_size < 0) throw Error(where + ": batching.max_batch_size must not be negative");
    if (model.batching.max_queue_delay_us < 0) throw Error(where + ": batching.max_queue_delay_us must not be negative");
    for (auto size : model.batching.preferred_batch_sizes)
      if (size < 1 || size > std::max(1, model.batching.max_batch_size))
        throw Error(where + ": batching.preferred_batch_sizes: " + std::to_string(size) + " is outside 1..max_batch_size");
    if (model.max_queue == 0) throw Error(where + ": max_queue must be at least 1");
    if (model.timeout_ms < 0) throw Error(where + ": timeout_ms must not be negative (0 = none)");
    if (model.inline_below_us < 0) throw Error(where + ": inline_below_us must not be negative (0 = never inline)");
    if (model.breaker_trip_after < 0) throw Error(where + ": breaker.trip_after must not be negative (0 = never opens)");
    std::set<std::string> variant_names;
    double total_weight = 0;
    for (const auto& variant : model.variants) {
      const auto at = where + ": variant '" + variant.name + "'";
      declared_backends().check_known(variant.backend);
      if (variant.name.empty() || variant.name.find('/') != std::string::npos)
        throw Error(where + ": a variant name must be non-empty and must not contain '/'");
      if (!variant_names.insert(variant.name).second) throw Error(at + ": named twice");
      if (variant.model.empty() && model.file.empty())
        throw Error(at + ": no model file (set the model's 'file' or the variant's 'model')");
      if (variant.instances < 1) throw Error(at + ": instances must be at least 1");
      if (variant.slots < 1) throw Error(at + ": slots must be at least 1");
      if (variant.context < 0) throw Error(at + ": context must not be negative (0 = the model's)");
      if (variant.threads < 0) throw Error(at + ": threads must not be negative (0 = framework default)");
      if (variant.weight < 0) throw Error(at + ": weight must not be negative");
      total_weight += variant.weight;
    }
    if (total_weight <= 0) throw Error(where + ": the variants' weights add up to 0; give at least one a positive weight");
    for (const auto& variant : model.variants)
      if (variant.shadow) {
        const auto at = where + ": variant '" + variant.name + "': shadow";
        if (!variant_names.count(variant.shadow->to))
          throw Error(at + ": 'to' names no variant of this model ('" + variant.shadow->to + "')");
        if (variant.shadow->to == variant.name) throw Error(at + ": a variant cannot shadow itself");
        if (variant.shadow->share <= 0 || variant.shadow->share > 1) throw Error(at + ": share must be in (0, 1]");
        if (!(variant.shadow->tolerance.max_abs_error >= 0)) throw Error(at + ": tolerance must not be negative");
        if (!(variant.shadow->tolerance.min_cosine >= -1 && variant.shadow->tolerance.min_cosine <= 1))
          throw Error(at + ": min_cosine must be in [-1, 1]");
      }
  }
}

}  // namespace infermark::serve

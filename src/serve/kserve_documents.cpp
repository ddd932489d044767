#include "serve/kserve_documents.hpp"

#include <algorithm>

#include "serve/kserve_codec.hpp"

namespace infermark::serve {
namespace {

using nlohmann::json;

constexpr std::string_view kServerVersion = "2.51.0";  // the KServe v2 / Triton protocol level spoken

json duration_json(std::uint64_t count, std::uint64_t ns) { return {{"count", count}, {"ns", ns}}; }

}  // namespace

json server_metadata() {
  return {{"name", "infermark"},
          {"version", kServerVersion},
          {"extensions", {"binary_tensor_data", "statistics", "model_configuration"}}};
}

json model_metadata(const ServedModel& model, const Variant& variant) {
  json variants = json::array();
  for (const auto& v : model.variants)
    variants.push_back({{"name", v->name()},
                        {"backend", v->backend().name},
                        {"framework_version", v->backend().version},
                        {"weight", v->spec().weight},
                        {"max_batch_size", v->max_batch_rows() > 1 ? v->max_batch_rows() : 0},
                        {"batching_note", v->batching_note()},
                        {"breaker", v->breaker_state()}});
  return {{"name", model.spec.name},
          {"versions", {"1"}},
          {"platform", "infermark_" + variant.backend().name},
          {"inputs", tensor_metadata(variant.inputs())},
          {"outputs", tensor_metadata(variant.outputs())},
          {"parameters", {{"variants", variants}}}};
}

json model_statistics(const ServedModel& model) {
  VariantStats total;
  std::int64_t last = 0;
  for (const auto& v : model.variants) {
    const auto& s = v->stats();
    total.success_count += s.success_count;
    total.success_ns += s.success_ns;
    total.fail_count += s.fail_count;
    total.fail_ns += s.fail_ns;
    total.queue_count += s.queue_count;
    total.queue_ns += s.queue_ns;
    total.compute_count += s.compute_count;
    total.compute_ns += s.compute_ns;
    total.inference_count += s.inference_count;
    total.execution_count += s.execution_count;
    last = std::max<std::int64_t>(last, s.last_inference_ms);
  }
  return {{"name", model.spec.name},
          {"version", "1"},
          {"last_inference", last},
          {"inference_count", total.inference_count.load()},
          {"execution_count", total.execution_count.load()},
          {"inference_stats",
           {{"success", duration_json(total.success_count, total.success_ns)},
            {"fail", duration_json(total.fail_count, total.fail_ns)},
            {"queue", duration_json(total.queue_count, total.queue_ns)},
            {"compute_input", duration_json(total.compute_count, 0)},
            {"compute_infer", duration_json(total.compute_count, total.compute_ns)},
            {"compute_output", duration_json(total.compute_count, 0)},
            {"cache_hit", duration_json(0, 0)},
            {"cache_miss", duration_json(0, 0)}}},
          {"batch_stats", json::array()}};
}

json repository_index(const ModelRepository& repository) {
  json index = json::array();
  for (const auto& model : repository.models())
    index.push_back({{"name", model->spec.name}, {"version", "1"}, {"state", "READY"}, {"reason", ""}});
  return index;
}

}  // namespace infermark::serve

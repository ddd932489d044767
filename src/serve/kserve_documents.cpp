#include "serve/kserve_documents.hpp"

#include <algorithm>

#include "kserve/kserve_codec.hpp"

namespace infermark::serve {
namespace {

using nlohmann::json;

constexpr std::string_view kServerVersion = "2.51.0";  // the KServe v2 / Triton protocol level spoken

json duration_json(std::uint64_t count, std::uint64_t ns) { return {{"count", count}, {"ns", ns}}; }
json duration_json(const DurationStat& stat) { return duration_json(stat.count, stat.ns); }

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
                        {"breaker", name_of(v->breaker_state())}});
  return {{"name", model.spec.name},
          {"versions", {"1"}},
          {"platform", "infermark_" + variant.backend().name},
          {"inputs", kserve::tensor_metadata(variant.inputs())},
          {"outputs", kserve::tensor_metadata(variant.outputs())},
          {"parameters", {{"variants", variants}}}};
}

json model_statistics(const ServedModel& model) {
  InferenceTotals total;
  for (const auto& v : model.variants) total += v->stats();
  // Input and output preparation (stacking a batch, splitting its outputs) are timed inside
  // compute_infer: their own entries carry the counts with no time of their own.
  json batch_stats = json::array();
  for (const auto& [rows, executions] : total.batches)
    batch_stats.push_back({{"batch_size", rows},
                           {"compute_input", duration_json(executions.count, 0)},
                           {"compute_infer", duration_json(executions.count, executions.ns)},
                           {"compute_output", duration_json(executions.count, 0)}});
  return {{"name", model.spec.name},
          {"version", "1"},
          {"last_inference", total.last_inference_ms},
          {"inference_count", total.inference_count},
          {"execution_count", total.execution_count},
          {"inference_stats",
           {{"success", duration_json(total.success)},
            {"fail", duration_json(total.fail)},
            {"queue", duration_json(total.queue)},
            {"compute_input", duration_json(total.compute_infer.count, 0)},
            {"compute_infer", duration_json(total.compute_infer)},
            {"compute_output", duration_json(total.compute_infer.count, 0)},
            {"cache_hit", duration_json(0, 0)},
            {"cache_miss", duration_json(0, 0)}}},
          {"batch_stats", batch_stats}};
}

json repository_index(const ModelRepository& repository) {
  json index = json::array();
  for (const auto& model : repository.models())
    index.push_back({{"name", model->spec.name}, {"version", "1"}, {"state", "READY"}, {"reason", ""}});
  return index;
}

}  // namespace infermark::serve

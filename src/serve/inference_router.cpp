#include "serve/inference_router.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "core/output_kind.hpp"
#include "core/random.hpp"
#include "kserve/kserve_codec.hpp"

namespace infermark::serve {

int http_status(InferStatus status) {
  switch (status) {
    case InferStatus::kOk:
      return 200;
    case InferStatus::kQueueFull:
      return 429;
    case InferStatus::kBreakerOpen:
    case InferStatus::kShuttingDown:
      return 503;
    case InferStatus::kTimedOut:
      return 504;
    case InferStatus::kFailed:
      return 500;
  }
  return 500;
}

InferenceRouter::InferenceRouter(ModelRepository& repository, ServeMetrics& metrics)
    : repository_(repository), metrics_(metrics) {
  for (const auto& model : repository_.models())
    for (const auto& variant : model->variants)
      if (const auto& shadow = variant->spec().shadow)
        shadow_judges_[variant.get()] =
            std::make_shared<const ShadowJudge>(read_output_kinds(variant_file(model->spec, variant->spec())), shadow->tolerance);
}

int retry_after_s(const ModelSpec& model) { return std::max(1, static_cast<int>(model.breaker_cooldown_ms / 1000 + 0.5)); }

ServedModel& InferenceRouter::model(std::string_view name) {
  auto* model = repository_.find(name);
  if (!model)
    throw kserve::RequestError(404, "unknown model '" + std::string(name) + "' (served: " + repository_.model_names() + ")");
  return *model;
}

ServedModel& InferenceRouter::tensor_model(std::string_view name) {
  auto& found = model(name);
  if (found.is_language_model())
    throw kserve::RequestError(
        400, "model '" + found.spec.name + "' is a language model: use /v1/completions or /v1/chat/completions");
  return found;
}

Variant& InferenceRouter::described_variant(ServedModel& model, std::string_view version) {
  if (model.is_language_model())
    throw kserve::RequestError(
        400, "model '" + model.spec.name +
                 "' is a language model: use the OpenAI API (/v1/models, /v1/completions, /v1/chat/completions)");
  if (version.empty() || version == "1") return *model.variants.front();
  return *model.variants.at(model.choose({"", "", version, ""}).index);
}

RoutedInference InferenceRouter::route(ServedModel& model, std::vector<Tensor> inputs, const std::vector<std::string>& outputs,
                                       const RouteHints& hints, std::int64_t started_ns, std::int64_t client_deadline_ns) {
  RoutedInference routed;
  routed.model = &model;
  routed.started_ns = started_ns;
  const auto choice = model.choose(hints);
  routed.variant = model.variants.at(choice.index).get();
  Variant& variant = *routed.variant;
  variant.metrics().routed[static_cast<std::size_t>(choice.how)]->Increment();
  routed.inputs = kserve::match_inputs(std::move(inputs), variant.inputs());
  routed.rows = routed.inputs.front().shape.empty() ? 1 : routed.inputs.front().shape.front();
  if (variant.max_batch_rows() > 1) {
    for (const auto& tensor : routed.inputs)
      if (tensor.shape.front() != routed.rows)
        throw kserve::RequestError(400, "input '" + tensor.name + "': dimension 0 is " + std::to_string(tensor.shape.front()) +
                                            ", other inputs have " + std::to_string(routed.rows) + " rows");
    if (routed.rows > variant.max_batch_rows())
      throw kserve::RequestError(400, "batch of " + std::to_string(routed.rows) + " rows exceeds max_batch_size " +
                                          std::to_string(variant.max_batch_rows()) + " of model '" + model.spec.name + "'");
  }
  kserve::check_requested_outputs(outputs, variant.outputs());
  // Shadow: decided now, so only mirrored requests keep a copy of their inputs.
  const auto& shadow_spec = variant.spec().shadow;
  if (shadow_spec && SeededRandom(shadow_draws_.fetch_add(1) + 0x5ad0).uniform() < shadow_spec->share)
    routed.mirrored = routed.inputs;
  routed.deadline_ns = model.spec.timeout_ms > 0 ? started_ns + static_cast<std::int64_t>(model.spec.timeout_ms * 1e6) : 0;
  if (client_deadline_ns > 0 && (routed.deadline_ns == 0 || client_deadline_ns < routed.deadline_ns))
    routed.deadline_ns = client_deadline_ns;
  return routed;
}

void InferenceRouter::submit(RoutedInference& request, std::function<void(InferenceResult)> done) {
  request.variant->submit(std::move(request.inputs), request.deadline_ns, std::move(done));
}

int InferenceRouter::account(RoutedInference& request, const InferenceResult& result) {
  const int status = http_status(result.status);
  const auto& model_name = request.model->spec.name;
  Variant& variant = *request.variant;
  if (result.status == InferStatus::kOk) {
    if (!request.mirrored.empty()) shadow(request, result.outputs);
  } else {
    if (status == 429) metrics_.count_rejection(model_name, variant.name(), "queue_full");
    if (result.status == InferStatus::kBreakerOpen) metrics_.count_rejection(model_name, variant.name(), "breaker_open");
    variant.traffic().record_error();
  }
  const auto elapsed = mono_now_ns() - request.started_ns;
  if (status == 200) {
    const auto& cells = variant.metrics();
    variant.traffic().record_success(elapsed, request.rows);
    cells.total_seconds->Observe(static_cast<double>(elapsed) * 1e-9);
    cells.ok_requests->Increment();
  } else {
    metrics_.count_request(model_name, variant.name(), status);
  }
  return status;
}

void InferenceRouter::shadow(RoutedInference& request, const std::vector<Tensor>& outputs) {
  Variant& primary = *request.variant;
  auto* target = request.model->variant(primary.spec().shadow->to);
  const auto shape = format_shape(request.mirrored.front().shape);
  auto reference = std::make_shared<std::vector<Tensor>>(outputs);
  auto& metrics = metrics_;
  const auto model_name = request.model->spec.name, primary_name = primary.name(), shadow_name = target->name();
  auto& traffic = primary.traffic();  // variants live until the server stops, after every shadow finished
  const auto judge = shadow_judges_.at(&primary);
  target->submit(std::move(request.mirrored), 0, [=, &metrics, &traffic](InferenceResult result) {
    if (result.status != InferStatus::kOk) {
      metrics.count_shadow_dropped(model_name, primary_name, shadow_name);
      traffic.record_shadow_dropped(shadow_name);
      return;
    }
    const auto verdict = judge->judge(*reference, result.outputs);
    metrics.count_shadow(model_name, primary_name, shadow_name, shape, verdict.disagreed, verdict.max_abs_error);
    traffic.record_shadow(shadow_name, shape, verdict.disagreed, verdict.max_abs_error);
  });
}

}  // namespace infermark::serve

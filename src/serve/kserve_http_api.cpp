#include "serve/kserve_http_api.hpp"

#include <charconv>

#include "core/clock.hpp"
#include "core/random.hpp"
#include "net/completion.hpp"
#include "serve/kserve_codec.hpp"
#include "serve/triton_model_config.hpp"
#include "stats/output_agreement.hpp"

namespace infermark::serve {
namespace {

namespace http = net::http;
using nlohmann::json;

constexpr std::string_view kVariantHeader = "X-Model-Variant";
constexpr std::string_view kServerVersion = "2.51.0";  // the KServe v2 / Triton protocol level spoken

std::vector<std::string> split_path(std::string_view target) {
  const auto query = target.find('?');
  if (query != std::string_view::npos) target = target.substr(0, query);
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos < target.size()) {
    const auto next = target.find('/', pos);
    const auto part = target.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    if (!part.empty()) parts.emplace_back(part);
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return parts;
}

net::Response json_response(const json& body, http::status status = http::status::ok) {
  return net::make_response(status, body.dump());
}

net::Response empty_ok() { return net::make_response(http::status::ok, "", "text/plain"); }

int status_of(InferStatus status) {
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

// Triton's failure reason label.
std::string failure_reason(int status) {
  if (status == 429 || status == 503) return "REJECTED";
  if (status == 504) return "CANCELED";
  if (status >= 500) return "BACKEND";
  return "OTHER";
}

json duration_json(std::uint64_t count, std::uint64_t ns) { return {{"count", count}, {"ns", ns}}; }

json model_stats(const ServedModel& model) {
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

std::optional<std::size_t> header_length(const net::Request& request) {
  const auto field = net::field_of(request, "Inference-Header-Content-Length");
  if (field.empty()) return std::nullopt;
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size())
    throw RequestError(400, "Inference-Header-Content-Length: '" + std::string(field) + "' is not a byte count");
  return value;
}

}  // namespace

boost::asio::awaitable<void> KServeHttpApi::handle(net::Request& request, net::Responder& responder) {
  struct InFlight {  // the gauge follows every exit, exceptions included
    KServeHttpApi& api;
    explicit InFlight(KServeHttpApi& a) : api(a) { api.metrics_.set_in_flight(static_cast<double>(++api.in_flight_)); }
    ~InFlight() { api.metrics_.set_in_flight(static_cast<double>(--api.in_flight_)); }
  } in_flight(*this);
  int error_status = 0;
  std::string error_message;
  try {
    co_await route(request, responder);
  } catch (const RequestError& e) {
    error_status = e.status();
    error_message = e.what();
  }
  // Outside the catch block: a coroutine cannot co_await inside one.
  if (error_status != 0 && !responder.answered()) {
    auto response = net::error_response(static_cast<http::status>(error_status), error_message);
    co_await responder.send(std::move(response));
  }
}

boost::asio::awaitable<void> KServeHttpApi::route(net::Request& request, net::Responder& responder) {
  const std::vector<std::string> parts = split_path(net::target_of(request));
  // POST /v2/models/{m}[/versions/{v}]/infer is the one route that waits for inference.
  const bool is_infer = parts.size() >= 4 && parts[0] == "v2" && parts[1] == "models" && parts.back() == "infer" &&
                        (parts.size() == 4 || (parts.size() == 6 && parts[3] == "versions"));
  if (is_infer && request.method() == http::verb::post) {
    auto* model = repository_.find(parts[2]);
    if (!model) throw RequestError(404, "unknown model '" + parts[2] + "' (served: " + repository_.model_names() + ")");
    // Named locals, not temporaries, across co_await (GCC 12 mishandles temporaries in co_await operands).
    std::string version = parts.size() == 6 ? parts[4] : std::string();
    co_await infer(request, responder, *model, std::move(version));
    co_return;
  }
  auto response = answer(request, parts);
  co_await responder.send(std::move(response));
}

net::Response KServeHttpApi::answer(const net::Request& request, const std::vector<std::string>& parts) {
  const bool get = request.method() == http::verb::get;
  const auto no_route = [&] {
    return net::error_response(http::status::not_found, "no route for " + std::string(net::target_of(request)));
  };
  if (parts.size() == 1 && parts[0] == "metrics" && get)
    return net::make_response(http::status::ok, metrics_.scrape(), "text/plain; version=0.0.4");
  if (parts.size() == 1 && (parts[0] == "ready" || parts[0] == "live"))
    return parts[0] == "live" || ready_ ? empty_ok() : net::error_response(http::status::service_unavailable, "not ready");
  if (parts.empty() || parts[0] != "v2") return no_route();
  if (parts.size() >= 4 && parts[1] == "models" && parts.back() == "infer")
    return net::error_response(http::status::method_not_allowed, "infer takes POST");
  if (!get && !(parts.size() == 3 && parts[1] == "repository"))
    return net::error_response(http::status::method_not_allowed, std::string(net::target_of(request)) + " takes GET");
  if (parts.size() == 1)
    return json_response({{"name", "infermark"},
                          {"version", kServerVersion},
                          {"extensions", {"binary_tensor_data", "statistics", "model_configuration"}}});
  if (parts.size() == 3 && parts[1] == "health" && (parts[2] == "live" || parts[2] == "ready"))
    return parts[2] == "live" || ready_ ? empty_ok() : net::error_response(http::status::service_unavailable, "not ready");
  if (parts.size() == 3 && parts[1] == "models" && parts[2] == "stats") {
    json stats = json::array();
    for (const auto& model : repository_.models()) stats.push_back(model_stats(*model));
    return json_response({{"model_stats", stats}});
  }
  if (parts.size() == 3 && parts[1] == "repository" && parts[2] == "index") {
    json index = json::array();
    for (const auto& model : repository_.models())
      index.push_back({{"name", model->spec.name}, {"version", "1"}, {"state", "READY"}, {"reason", ""}});
    return json_response(index);
  }
  if (parts.size() >= 3 && parts[1] == "models") {
    auto* model = repository_.find(parts[2]);
    if (!model)
      return net::error_response(http::status::not_found,
                                 "unknown model '" + parts[2] + "' (served: " + repository_.model_names() + ")");
    std::size_t next = 3;
    std::string version;
    if (parts.size() >= 5 && parts[3] == "versions") {
      version = parts[4];
      next = 5;
    }
    if (parts.size() > next + 1) return no_route();
    return model_route(request, *model, version, parts.size() > next ? parts[next] : "");
  }
  return no_route();
}

net::Response KServeHttpApi::model_route(const net::Request& request, ServedModel& model, const std::string& version,
                                         const std::string& action) {
  if (request.method() != http::verb::get)
    return net::error_response(http::status::method_not_allowed, "'" + action + "' takes GET");
  if (model.is_language_model()) {
    if (action == "ready") return empty_ok();
    return net::error_response(http::status::bad_request, "model '" + model.spec.name +
                                                              "' is a language model: use the OpenAI API (/v1/models, "
                                                              "/v1/completions, /v1/chat/completions)");
  }
  Variant* variant = model.variants.front().get();
  if (!version.empty() && version != "1") {
    variant = model.variant(version);
    if (!variant)
      return net::error_response(http::status::not_found, "model '" + model.spec.name + "' has no version '" + version +
                                                              "' (versions: 1, or a variant: " + model.variant_names() + ")");
  }
  if (action.empty()) {
    json variants = json::array();
    for (const auto& v : model.variants)
      variants.push_back({{"name", v->name()},
                          {"backend", v->backend().name},
                          {"framework_version", v->backend().version},
                          {"weight", v->spec().weight},
                          {"max_batch_size", v->max_batch_rows() > 1 ? v->max_batch_rows() : 0},
                          {"batching_note", v->batching_note()},
                          {"breaker", v->breaker_state()}});
    return json_response({{"name", model.spec.name},
                          {"versions", {"1"}},
                          {"platform", "infermark_" + variant->backend().name},
                          {"inputs", tensor_metadata(variant->inputs())},
                          {"outputs", tensor_metadata(variant->outputs())},
                          {"parameters", {{"variants", variants}}}});
  }
  if (action == "ready") return empty_ok();
  if (action == "config") return json_response(triton_model_config(model.spec, *variant));
  if (action == "stats") return json_response({{"model_stats", {model_stats(model)}}});
  return net::error_response(http::status::not_found, "no route for " + std::string(net::target_of(request)));
}

boost::asio::awaitable<void> KServeHttpApi::infer(net::Request& request, net::Responder& responder, ServedModel& model,
                                                  std::string version) {
  const auto started = mono_now_ns();
  if (model.is_language_model())
    throw RequestError(400, "model '" + model.spec.name + "' is a language model: use /v1/completions or /v1/chat/completions");
  if (!net::field_of(request, http::field::content_encoding).empty() && net::field_of(request, http::field::content_encoding) != "identity")
    throw RequestError(400, "Content-Encoding '" + std::string(net::field_of(request, http::field::content_encoding)) +
                                "' is not supported; send the body uncompressed");
  auto parsed = parse_infer_request(request.body(), header_length(request));
  request.body().clear();  // the tensors hold their own copies now
  // Routing: an explicit variant (header or version path), else sticky key, else the weighted split.
  Variant* variant = nullptr;
  std::string how;
  const auto named = net::field_of(request, kVariantHeader);
  if (!named.empty()) {
    variant = model.variant(named);
    how = "header";
    if (!variant)
      throw RequestError(400, std::string(kVariantHeader) + ": model '" + model.spec.name + "' has no variant '" +
                                  std::string(named) + "' (variants: " + model.variant_names() + ")");
  } else if (!version.empty() && version != "1") {
    variant = model.variant(version);
    how = "version";
    if (!variant)
      throw RequestError(404, "model '" + model.spec.name + "' has no version '" + version + "' (versions: 1, or a variant: " +
                                  model.variant_names() + ")");
  } else {
    const auto key = net::field_of(request, model.spec.sticky_header);
    variant = model.variants[model.router->pick(key)].get();
    how = key.empty() ? "weighted" : "sticky";
  }
  metrics_.count_routing(model.spec.name, variant->name(), how);
  auto inputs = match_inputs(std::move(parsed.inputs), variant->inputs());
  const auto rows = inputs.front().shape.empty() ? 1 : inputs.front().shape.front();
  if (variant->max_batch_rows() > 1) {
    for (const auto& tensor : inputs)
      if (tensor.shape.front() != rows)
        throw RequestError(400, "input '" + tensor.name + "': dimension 0 is " + std::to_string(tensor.shape.front()) +
                                    ", other inputs have " + std::to_string(rows) + " rows");
    if (rows > variant->max_batch_rows())
      throw RequestError(400, "batch of " + std::to_string(rows) + " rows exceeds max_batch_size " +
                                  std::to_string(variant->max_batch_rows()) + " of model '" + model.spec.name + "'");
  }
  // Shadow: decide now, so only mirrored requests keep a copy of their inputs.
  std::vector<Tensor> mirrored;
  const auto& shadow_spec = variant->spec().shadow;
  if (shadow_spec && SeededRandom(shadow_draws_.fetch_add(1) + 0x5ad0).uniform() < shadow_spec->share) mirrored = inputs;
  const auto deadline = model.spec.timeout_ms > 0 ? started + static_cast<std::int64_t>(model.spec.timeout_ms * 1e6) : 0;
  auto submit = [variant, deadline, inputs = std::move(inputs)](std::function<void(InferenceResult)> deliver) mutable {
    variant->submit(std::move(inputs), deadline, std::move(deliver));
  };
  auto result = co_await net::await_completion<InferenceResult>(std::move(submit));
  const int status = status_of(result.status);
  const auto& metrics_name = model.spec.name;
  net::Response response;
  if (result.status == InferStatus::kOk) {
    auto encoded = encode_infer_response({model.spec.name, "1", parsed.id}, result.outputs, parsed);
    const bool binary = encoded.json_length.has_value();
    response = net::make_response(http::status::ok, std::move(encoded.body),
                                  binary ? "application/octet-stream" : "application/json");
    if (binary) response.set("Inference-Header-Content-Length", std::to_string(*encoded.json_length));
    if (!mirrored.empty()) shadow(model, *variant, mirrored, result.outputs);
  } else {
    response = net::error_response(static_cast<http::status>(status), result.error);
    if (status == 429 || status == 503)
      response.set(http::field::retry_after,
                   std::to_string(std::max(1, static_cast<int>(model.spec.breaker_cooldown_ms / 1000 + 0.5))));
    if (status == 429) metrics_.count_rejection(metrics_name, variant->name(), "queue_full");
    if (result.status == InferStatus::kBreakerOpen) metrics_.count_rejection(metrics_name, variant->name(), "breaker_open");
    metrics_.count_failure(metrics_name, variant->name(), failure_reason(status));
    variant->traffic().record_error();
  }
  response.set(std::string(kVariantHeader), variant->name());
  const auto elapsed = mono_now_ns() - started;
  auto cells = metrics_.variant(metrics_name, variant->name());
  if (status == 200) {
    variant->traffic().record_success(elapsed, rows);
    cells.success->Increment();
    cells.request_us->Increment(static_cast<double>(elapsed) * 1e-3);
    cells.total_seconds->Observe(static_cast<double>(elapsed) * 1e-9);
  }
  metrics_.count_request(metrics_name, variant->name(), status);
  co_await responder.send(std::move(response));
}

void KServeHttpApi::shadow(ServedModel& model, Variant& primary, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& outputs) {
  auto* target = model.variant(primary.spec().shadow->to);
  const auto shape = format_shape(inputs.front().shape);
  auto reference = std::make_shared<std::vector<Tensor>>(outputs);
  auto& metrics = metrics_;
  const auto model_name = model.spec.name, primary_name = primary.name(), shadow_name = target->name();
  target->submit(inputs, 0, [=, &metrics](InferenceResult result) {
    if (result.status != InferStatus::kOk) {
      metrics.count_shadow_dropped(model_name, primary_name, shadow_name);
      return;
    }
    bool disagreed = false;
    double max_error = 0;
    for (const auto& agreement : stats::compare_outputs(*reference, result.outputs)) {
      if (!agreement.comparable) disagreed = true;
      max_error = std::max(max_error, agreement.max_abs_error);
      if (agreement.top1_agreement && *agreement.top1_agreement < 1.0) disagreed = true;
    }
    metrics.count_shadow(model_name, primary_name, shadow_name, shape, disagreed, max_error);
  });
}

}  // namespace infermark::serve

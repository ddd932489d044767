#include "serve/kserve_http_api.hpp"

#include "core/clock.hpp"
#include "core/json_text.hpp"
#include "kserve/kserve_codec.hpp"
#include "kserve/kserve_http_fields.hpp"
#include "net/completion.hpp"
#include "serve/kserve_documents.hpp"
#include "serve/triton_model_config.hpp"

namespace infermark::serve {
namespace {

namespace http = net::http;
using nlohmann::json;

net::Response json_response(const json& body, http::status status = http::status::ok) {
  return net::make_response(status, json_text(body));
}

net::Response empty_ok() { return net::make_response(http::status::ok, "", "text/plain"); }

std::optional<std::size_t> header_length(const net::Request& request) {
  return kserve::parse_header_length(net::field_of(request, "Inference-Header-Content-Length"));
}

}  // namespace

boost::asio::awaitable<void> KServeHttpApi::handle(net::Request& request, net::Responder& responder) {
  const InFlightRequest in_flight(metrics_);  // the gauge follows every exit, exceptions included
  int error_status = 0;
  std::string error_message;
  try {
    co_await route(request, responder);
  } catch (const kserve::RequestError& e) {
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
  const std::vector<std::string> parts = kserve::split_path(net::target_of(request));
  // POST /v2/models/{m}[/versions/{v}]/infer is the one route that waits for inference.
  const bool is_infer = parts.size() >= 4 && parts[0] == "v2" && parts[1] == "models" && parts.back() == "infer" &&
                        (parts.size() == 4 || (parts.size() == 6 && parts[3] == "versions"));
  if (is_infer && request.method() == http::verb::post) {
    auto& model = router_.tensor_model(parts[2]);
    // Named locals, not temporaries, across co_await (GCC 12 mishandles temporaries in co_await operands).
    std::string version = parts.size() == 6 ? parts[4] : std::string();
    co_await infer(request, responder, model, std::move(version));
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
    return parts[0] == "live" || router_.ready() ? empty_ok()
                                                 : net::error_response(http::status::service_unavailable, "not ready");
  if (parts.empty() || parts[0] != "v2") return no_route();
  if (parts.size() >= 4 && parts[1] == "models" && parts.back() == "infer")
    return net::error_response(http::status::method_not_allowed, "infer takes POST");
  if (!get && !(parts.size() == 3 && parts[1] == "repository"))
    return net::error_response(http::status::method_not_allowed, std::string(net::target_of(request)) + " takes GET");
  if (parts.size() == 1) return json_response(server_metadata());
  if (parts.size() == 3 && parts[1] == "health" && (parts[2] == "live" || parts[2] == "ready"))
    return parts[2] == "live" || router_.ready() ? empty_ok()
                                                 : net::error_response(http::status::service_unavailable, "not ready");
  if (parts.size() == 3 && parts[1] == "models" && parts[2] == "stats") {
    json stats = json::array();
    for (const auto& model : router_.repository().models()) stats.push_back(model_statistics(*model));
    return json_response({{"model_stats", stats}});
  }
  if (parts.size() == 3 && parts[1] == "repository" && parts[2] == "index")
    return json_response(repository_index(router_.repository()));
  if (parts.size() >= 3 && parts[1] == "models") {
    auto& model = router_.model(parts[2]);
    std::size_t next = 3;
    std::string version;
    if (parts.size() >= 5 && parts[3] == "versions") {
      version = parts[4];
      next = 5;
    }
    if (parts.size() > next + 1) return no_route();
    return model_route(request, model, version, parts.size() > next ? parts[next] : "");
  }
  return no_route();
}

net::Response KServeHttpApi::model_route(const net::Request& request, ServedModel& model, const std::string& version,
                                         const std::string& action) {
  if (request.method() != http::verb::get)
    return net::error_response(http::status::method_not_allowed, "'" + action + "' takes GET");
  if (model.is_language_model() && action == "ready") return empty_ok();
  const Variant& variant = router_.described_variant(model, version);
  if (action.empty()) return json_response(model_metadata(model, variant));
  if (action == "ready") return empty_ok();
  if (action == "config") return json_response(triton_model_config(model.spec, variant));
  if (action == "stats") return json_response({{"model_stats", {model_statistics(model)}}});
  return net::error_response(http::status::not_found, "no route for " + std::string(net::target_of(request)));
}

boost::asio::awaitable<void> KServeHttpApi::infer(net::Request& request, net::Responder& responder, ServedModel& model,
                                                  std::string version) {
  const auto started = mono_now_ns();
  if (!net::field_of(request, http::field::content_encoding).empty() &&
      net::field_of(request, http::field::content_encoding) != "identity")
    throw kserve::RequestError(400, "Content-Encoding '" + std::string(net::field_of(request, http::field::content_encoding)) +
                                        "' is not supported; send the body uncompressed");
  auto parsed = kserve::parse_infer_request(request.body(), header_length(request));
  request.body().clear();  // the tensors hold their own copies now
  std::vector<std::string> outputs;
  for (const auto& output : parsed.outputs) outputs.push_back(output.name);
  const RouteHints hints{net::field_of(request, kVariantHeader), kVariantHeader, version,
                         net::field_of(request, model.spec.sticky_header)};
  auto routed = router_.route(model, std::move(parsed.inputs), outputs, hints, started);
  auto submit = [this, &routed](std::function<void(InferenceResult)> deliver) { router_.submit(routed, std::move(deliver)); };
  auto result = co_await net::await_completion<InferenceResult>(std::move(submit));
  net::Response response;
  if (result.status == InferStatus::kOk) {
    auto encoded = kserve::encode_infer_response({model.spec.name, "1", parsed.id}, result.outputs, parsed);
    const bool binary = encoded.json_length.has_value();
    response =
        net::make_response(http::status::ok, std::move(encoded.body), binary ? "application/octet-stream" : "application/json");
    if (binary) response.set("Inference-Header-Content-Length", std::to_string(*encoded.json_length));
  } else {
    const int status = http_status(result.status);
    response = net::error_response(static_cast<http::status>(status), result.error);
    if (status == 429 || status == 503) response.set(http::field::retry_after, std::to_string(retry_after_s(model.spec)));
  }
  response.set(std::string(kVariantHeader), routed.variant->name());
  router_.account(routed, result);
  co_await responder.send(std::move(response));
}

}  // namespace infermark::serve

// The HTTP routes of `infermark serve`: KServe v2 / Triton (health, metadata, config, stats,
// infer with JSON and binary tensors) and Prometheus /metrics. Routing, checks and accounting
// are the InferenceRouter's, shared with the gRPC front; this file speaks HTTP.
#pragma once

#include "net/http_server.hpp"
#include "serve/inference_router.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

class KServeHttpApi {
 public:
  KServeHttpApi(InferenceRouter& router, ServeMetrics& metrics) : router_(router), metrics_(metrics) {}

  boost::asio::awaitable<void> handle(net::Request& request, net::Responder& responder);

 private:
  boost::asio::awaitable<void> route(net::Request& request, net::Responder& responder);
  net::Response answer(const net::Request& request, const std::vector<std::string>& parts);  // every route but infer
  boost::asio::awaitable<void> infer(net::Request& request, net::Responder& responder, ServedModel& model, std::string version);
  net::Response model_route(const net::Request& request, ServedModel& model, const std::string& version,
                            const std::string& action);

  InferenceRouter& router_;
  ServeMetrics& metrics_;
};

}  // namespace infermark::serve

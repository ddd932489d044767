// The HTTP routes of `infermark serve`: KServe v2 / Triton (health, metadata, config, stats,
// infer with JSON and binary tensors), A/B routing by X-Model-Variant, version, sticky key or
// weights, shadow comparison, and Prometheus /metrics.
#pragma once

#include <atomic>

#include "net/http_server.hpp"
#include "serve/model_repository.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

class KServeHttpApi {
 public:
  KServeHttpApi(ModelRepository& repository, ServeMetrics& metrics) : repository_(repository), metrics_(metrics) {}

  boost::asio::awaitable<void> handle(net::Request& request, net::Responder& responder);
  void set_ready(bool ready) { ready_ = ready; }

 private:
  boost::asio::awaitable<void> route(net::Request& request, net::Responder& responder);
  net::Response answer(const net::Request& request, const std::vector<std::string>& parts);  // every route but infer
  boost::asio::awaitable<void> infer(net::Request& request, net::Responder& responder, ServedModel& model,
                                     std::string version);
  net::Response model_route(const net::Request& request, ServedModel& model, const std::string& version,
                            const std::string& action);
  void shadow(ServedModel& model, Variant& primary, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);

  ModelRepository& repository_;
  ServeMetrics& metrics_;
  std::atomic<bool> ready_{true};
  std::atomic<std::uint64_t> shadow_draws_{0};
  std::atomic<std::int64_t> in_flight_{0};
};

}  // namespace infermark::serve

// The OpenAI-compatible routes of `infermark serve` for language models: /v1/models,
// /v1/completions and /v1/chat/completions, whole or streamed as server-sent events, with the
// same A/B routing as the tensor models (X-Model-Variant, sticky key, weights).
#pragma once

#include <atomic>

#include "net/http_server.hpp"
#include "openai/openai_protocol.hpp"
#include "serve/model_repository.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

class OpenAiHttpApi {
 public:
  OpenAiHttpApi(ModelRepository& repository, ServeMetrics& metrics) : repository_(repository), metrics_(metrics) {}

  // Answers every /v1/... request.
  boost::asio::awaitable<void> handle(net::Request& request, net::Responder& responder);

 private:
  boost::asio::awaitable<void> complete(net::Request& request, net::Responder& responder, bool chat);
  net::Response list_models() const;

  ModelRepository& repository_;
  ServeMetrics& metrics_;
  std::atomic<std::uint64_t> requests_{0};
};

}  // namespace infermark::serve

// The KServe v2 gRPC front of `infermark serve`: the inference.GRPCInferenceService that Triton's
// clients and perf_analyzer use by default (health, server and model metadata, model config,
// statistics, repository index, ModelInfer). Routing, checks and accounting are the
// InferenceRouter's, shared with the HTTP API. Calls use gRPC's callback API: an inference call
// finishes from the variant's worker thread, so no gRPC thread waits for a model.
// gRPC's headers stay in the .cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "serve/inference_router.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

class KServeGrpcServer {
 public:
  KServeGrpcServer(InferenceRouter& router, ServeMetrics& metrics);
  ~KServeGrpcServer();
  KServeGrpcServer(const KServeGrpcServer&) = delete;
  KServeGrpcServer& operator=(const KServeGrpcServer&) = delete;

  // Listens on host:port (0: any free port), accepting messages up to `max_message_bytes`.
  // Throws infermark::Error naming the address when it cannot.
  void start(const std::string& host, int port, std::size_t max_message_bytes);
  int port() const;
  // Refuses new calls, lets calls in flight finish for up to `drain`, then cancels the rest.
  // Returns how many inference calls were still in flight when the drain ended.
  std::size_t shutdown(std::chrono::milliseconds drain);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infermark::serve

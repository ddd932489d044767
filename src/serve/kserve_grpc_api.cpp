#include "serve/kserve_grpc_api.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"
#include "kserve/kserve_grpc_codec.hpp"
#include "kserve/proto/grpc_service.grpc.pb.h"
#include "serve/kserve_documents.hpp"
#include "serve/triton_model_config.hpp"

namespace infermark::serve {
namespace {

constexpr std::string_view kVariantKey = "x-model-variant";  // gRPC metadata keys are lower case

grpc::Status error_status(const kserve::RequestError& error) { return {kserve::grpc_status_code(error.status()), error.what()}; }

// A metadata value the client sent, "" when absent (gRPC keys are lower case).
std::string_view metadata_value(const grpc::CallbackServerContext& context, std::string key) {
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(grpc::string_ref(key));
  return found == metadata.end() ? std::string_view() : std::string_view(found->second.data(), found->second.size());
}

// The client's deadline on the monotonic clock; 0 when it set none.
std::int64_t client_deadline_ns(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  const auto now = std::chrono::system_clock::now();
  if (deadline >= now + std::chrono::hours(24)) return 0;
  const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
  return mono_now_ns() + std::max<std::int64_t>(left, 1);
}

class Service final : public inference::GRPCInferenceService::CallbackService {
 public:
  Service(InferenceRouter& router, ServeMetrics& metrics) : router_(router), metrics_(metrics) {}

  std::size_t inferences_in_flight() const { return infers_in_flight_; }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    return answer(context, [&] { response->set_live(true); });
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context, const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    return answer(context, [&] { response->set_ready(router_.ready()); });
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context, const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override {
    return answer(context, [&] {
      auto& model = router_.model(request->name());
      if (!model.is_language_model()) router_.described_variant(model, request->version());
      response->set_ready(true);
    });
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    return answer(context, [&] { kserve::fill_from_json(server_metadata(), *response); });
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    return answer(context, [&] {
      auto& model = router_.model(request->name());
      kserve::fill_from_json(model_metadata(model, router_.described_variant(model, request->version())), *response);
    });
  }

  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override {
    return answer(context, [&] {
      auto& model = router_.model(request->name());
      kserve::fill_from_json(triton_model_config(model.spec, router_.described_variant(model, request->version())),
                             *response->mutable_config());
    });
  }

  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override {
    return answer(context, [&] {
      auto stats = nlohmann::json::array();
      if (request->name().empty()) {
        for (const auto& model : router_.repository().models()) stats.push_back(model_statistics(*model));
      } else {
        auto& model = router_.model(request->name());
        router_.described_variant(model, request->version());
        stats.push_back(model_statistics(model));
      }
      kserve::fill_from_json({{"model_stats", stats}}, *response);
    });
  }

  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest*,
                                            inference::RepositoryIndexResponse* response) override {
    return answer(context, [&] { kserve::fill_from_json({{"models", repository_index(router_.repository())}}, *response); });
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context, const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override {
    const auto started = mono_now_ns();
    auto* reactor = context->DefaultReactor();
    auto in_flight = std::make_shared<InFlightRequest>(metrics_);
    try {
      auto& model = router_.tensor_model(request->model_name());
      auto inputs = kserve::decode_infer_inputs(*request);
      auto outputs = kserve::requested_outputs(*request);
      const RouteHints hints{metadata_value(*context, std::string(kVariantKey)), kVariantKey, request->model_version(),
                             metadata_value(*context, model.spec.sticky_header)};
      auto routed = std::make_shared<RoutedInference>(
          router_.route(model, std::move(inputs), outputs, hints, started, client_deadline_ns(*context)));
      context->AddInitialMetadata(std::string(kVariantKey), routed->variant->name());
      ++infers_in_flight_;
      // Runs on the variant's worker thread (or here, when the variant refuses at once).
      router_.submit(*routed, [this, context, reactor, request, response, routed, in_flight,
                               outputs = std::move(outputs)](InferenceResult result) {
        grpc::Status status;
        if (result.status == InferStatus::kOk) {
          try {
            response->set_model_name(routed->model->spec.name);
            response->set_model_version("1");
            response->set_id(request->id());
            kserve::encode_infer_outputs(result.outputs, outputs, *response);
          } catch (const kserve::RequestError& e) {
            status = error_status(e);
          }
        } else {
          const int http = http_status(result.status);
          status = grpc::Status(kserve::grpc_status_code(http), result.error);
          if (http == 429 || http == 503)
            context->AddTrailingMetadata("retry-after", std::to_string(retry_after_s(routed->model->spec)));
        }
        router_.account(*routed, result);
        --infers_in_flight_;
        reactor->Finish(status);
      });
    } catch (const kserve::RequestError& e) {
      reactor->Finish(error_status(e));
    } catch (const std::exception& e) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    }
    return reactor;
  }

 private:
  // Answers a call at once: `fill` fills the response or throws.
  template <typename Fill>
  grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, Fill fill) {
    const InFlightRequest in_flight(metrics_);
    auto* reactor = context->DefaultReactor();
    try {
      fill();
      reactor->Finish(grpc::Status::OK);
    } catch (const kserve::RequestError& e) {
      reactor->Finish(error_status(e));
    } catch (const std::exception& e) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    }
    return reactor;
  }

  InferenceRouter& router_;
  ServeMetrics& metrics_;
  std::atomic<std::size_t> infers_in_flight_{0};
};

}  // namespace

struct KServeGrpcServer::Impl {
  Impl(InferenceRouter& router, ServeMetrics& metrics) : service(router, metrics) {}
  Service service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

KServeGrpcServer::KServeGrpcServer(InferenceRouter& router, ServeMetrics& metrics)
    : impl_(std::make_unique<Impl>(router, metrics)) {}

KServeGrpcServer::~KServeGrpcServer() {
  if (impl_->server) impl_->server->Shutdown(std::chrono::system_clock::now());
}

void KServeGrpcServer::start(const std::string& host, int port, std::size_t max_message_bytes) {
  const auto address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  grpc::ServerBuilder builder;
  // gRPC shares a port with another process by default (SO_REUSEPORT); a busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<std::size_t>(max_message_bytes, INT32_MAX)));
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl_->port);
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    impl_->server.reset();
    throw Error("gRPC: cannot listen on " + address + " (in use? --grpc-port 0 picks a free port, -1 turns gRPC off)");
  }
}

int KServeGrpcServer::port() const { return impl_->port; }

std::size_t KServeGrpcServer::shutdown(std::chrono::milliseconds drain) {
  if (!impl_->server) return 0;
  const auto deadline = std::chrono::system_clock::now() + drain;
  // Shutdown refuses new calls at once, waits for those in flight until the deadline and then
  // cancels them (a cancelled inference still finishes on its worker before Shutdown returns).
  std::thread stopper([&] { impl_->server->Shutdown(deadline); });
  while (impl_->service.inferences_in_flight() > 0 && std::chrono::system_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto left = impl_->service.inferences_in_flight();
  stopper.join();
  impl_->server.reset();
  return left;
}

}  // namespace infermark::serve

#include "serve/serve_main.hpp"

#include <fmt/core.h>
#include <pthread.h>
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <thread>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "net/http_server.hpp"
#include "result/results_folder.hpp"
#include "serve/inference_router.hpp"
#include "serve/kserve_grpc_api.hpp"
#include "serve/kserve_http_api.hpp"
#include "serve/model_repository.hpp"
#include "serve/openai_http_api.hpp"
#include "serve/serve_metrics.hpp"

namespace infermark::serve {

ServeConfig single_model_config(const SingleModelFlags& flags) {
  if (flags.model_file.empty()) throw Error("--model: give a model file (or --config FILE)");
  if (flags.backends.empty()) throw Error("-b/--backends: name at least one backend to serve the model with");
  if (!flags.weights.empty() && flags.weights.size() != flags.backends.size())
    throw Error("--weights: " + std::to_string(flags.weights.size()) + " weights for " + std::to_string(flags.backends.size()) +
                " backends; give one per backend");
  ModelSpec model;
  model.file = flags.model_file;
  model.name = flags.name.empty() ? std::filesystem::path(flags.model_file).stem().string() : flags.name;
  model.batching = flags.batching;
  model.max_queue = flags.max_queue;
  model.timeout_ms = flags.timeout_ms;
  model.inline_below_us = flags.inline_below_us;
  for (std::size_t i = 0; i < flags.backends.size(); ++i) {
    VariantSpec variant;
    variant.name = flags.backends[i];
    variant.backend = flags.backends[i];
    variant.precision = flags.precision;
    variant.threads = flags.threads;
    variant.instances = flags.instances;
    variant.slots = flags.slots;
    variant.context = flags.context;
    variant.options = flags.options;
    variant.weight = flags.weights.empty() ? 1.0 : flags.weights[i];
    model.variants.push_back(variant);
  }
  ServeConfig config;
  config.models.push_back(model);
  return config;
}

std::size_t connection_cap(std::size_t configured, std::size_t open_files) {
  if (configured > 0) return configured;
  constexpr std::size_t kReserve = 256;  // model files, gRPC, worker threads, connections being refused
  return open_files > 2 * kReserve ? open_files - kReserve : std::max<std::size_t>(1, open_files / 2);
}

std::size_t raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(limit.rlim_cur);
}

namespace {

// Every variant's served traffic as result files, so `infermark report` compares them. Failures
// are reported, not thrown: the server has already stopped and must exit cleanly.
void write_results(const ModelRepository& repository, const std::string& results_dir) {
  std::vector<std::pair<ServedVariant, const ServedTraffic*>> served;
  for (const auto& model : repository.models()) {
    for (const auto& v : model->variants) served.emplace_back(v->description(), &v->traffic());
    for (const auto& g : model->generators) served.emplace_back(g->description(), &g->traffic());
  }
  try {
    const auto folder = result::create_results_folder(results_dir, "serve", std::time(nullptr));
    const auto files = write_served_results(folder, served);
    fmt::print("infermark serve: {} per-variant results in {} (infermark report {})\n", files.size(), folder.string(),
               folder.string());
  } catch (const std::exception& e) {
    fmt::print(stderr, "infermark serve: could not write the per-variant results to {}: {}\n", results_dir, e.what());
  }
}

}  // namespace

int run_serve(const ServeConfig& config) {
  validate(config);
  // Every thread started from here on inherits the block; this thread waits for the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServeMetrics metrics;
  BackendRegistry registry(default_plugin_dir());
  ModelRepository repository(registry, config, metrics);
  for (const auto& model : repository.models())
    for (const auto& engine : model->generators)
      fmt::print(
          "infermark serve: model '{}' variant '{}': {} {} ({:.0f} ms to load), weight {}, continuous batching over {} "
          "sequence slots of {} tokens (OpenAI API)\n",
          model->spec.name, engine->name(), engine->backend().framework, engine->backend().version, engine->load_ms(),
          engine->spec().weight, engine->slots(), engine->context_length());
  for (const auto& model : repository.models())
    for (const auto& variant : model->variants)
      fmt::print("infermark serve: model '{}' variant '{}': {} {} ({:.0f} ms to load), weight {}, {}{}\n", model->spec.name,
                 variant->name(), variant->backend().framework, variant->backend().version, variant->load_ms(),
                 variant->spec().weight,
                 variant->max_batch_rows() > 1 ? "dynamic batching up to " + std::to_string(variant->max_batch_rows())
                                               : std::string("unbatched"),
                 variant->batching_note().empty() ? "" : " (" + variant->batching_note() + ")");
  InferenceRouter router(repository, metrics);
  KServeHttpApi api(router, metrics);
  OpenAiHttpApi openai(repository, metrics);
  net::ServerLimits limits;
  limits.max_body_bytes = config.max_body_mb << 20;
  limits.read_timeout = std::chrono::seconds(config.read_timeout_s);
  limits.idle_timeout = std::chrono::seconds(config.idle_timeout_s);
  limits.write_timeout = std::chrono::seconds(config.write_timeout_s);
  const auto open_files = raise_open_file_limit();
  limits.max_connections = connection_cap(config.max_connections, open_files);
  const int io_threads =
      config.io_threads > 0 ? config.io_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  net::HttpServer server(
      config.host, config.http_port, io_threads, limits, [&api, &openai](net::Request& request, net::Responder& responder) {
        return net::target_of(request).starts_with("/v1/") ? openai.handle(request, responder) : api.handle(request, responder);
      });
  // gRPC first: its line is printed before the HTTP one, which tells clients the server is up.
  KServeGrpcServer grpc(router, metrics);
  if (config.grpc_port >= 0) {
    grpc.start(config.host, config.grpc_port, config.max_body_mb << 20);
    fmt::print("infermark serve: gRPC (KServe v2) on {}:{}\n", config.host, grpc.port());
  }
  server.start();
  fmt::print(
      "infermark serve: listening on http://{}:{} (KServe v2 HTTP, OpenAI /v1, /metrics), {} io threads, "
      "at most {} connections (open-file limit {})\n",
      config.host, server.port(), io_threads, limits.max_connections, open_files);
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  fmt::print("infermark serve: {} received, draining (up to {:.0f} s)\n", received == SIGTERM ? "SIGTERM" : "SIGINT",
             config.drain_s);
  std::fflush(stdout);
  router.set_ready(false);
  // Both fronts drain at once, within the same time; the variants close after both.
  const auto drain = std::chrono::milliseconds(static_cast<std::int64_t>(config.drain_s * 1000));
  std::size_t grpc_left = 0;
  std::thread grpc_drain([&] { grpc_left = grpc.shutdown(drain); });
  const auto http_left = server.shutdown(drain);
  grpc_drain.join();
  const auto left = http_left + grpc_left;
  repository.close();
  write_results(repository, config.results_dir);
  fmt::print("infermark serve: stopped ({} requests still in flight at the end of the drain)\n", left);
  return left == 0 ? 0 : 1;
}

}  // namespace infermark::serve

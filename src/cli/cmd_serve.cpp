// `infermark serve`: puts models behind the KServe v2 protocol (HTTP and gRPC) and the OpenAI
// API with dynamic batching, A/B variants and Prometheus metrics. Wiring only: the server lives in src/serve/.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/serve_command.hpp"
#include "core/error.hpp"
#include "harness/run_options.hpp"
#include "scaleout/single_process_guard.hpp"

namespace infermark::cli {
namespace {

// A server flag: given, it sets `field` of the configuration (over a --config file's value);
// its default is the configuration's own.
template <class T>
CLI::Option* server_flag(CLI::App& cmd, ServeOptions& o, const std::string& name, T serve::ServeConfig::*field,
                         const std::string& help) {
  return cmd
      .add_option_function<T>(
          name,
          [&o, field](const T& value) {
            o.server_settings.push_back([field, value](serve::ServeConfig& c) { c.*field = value; });
          },
          help)
      ->default_str(fmt::format("{}", serve::ServeConfig{}.*field));
}

}  // namespace

void define_serve_flags(CLI::App& cmd, ServeOptions& o) {
  auto& m = o.model;
  auto* config =
      cmd.add_option("--config", o.config_file, "Model repository file (YAML: models, variants, batching; see docs/serving.md)");
  cmd.add_option("--model", m.model_file, "One model file to serve (instead of --config)")->excludes(config);
  cmd.add_option("--name", m.name, "The served model's name (default: the file's stem)");
  cmd.add_option("-b,--backends", m.backends, "Backends, one variant each (named after the backend)")->delimiter(',');
  cmd.add_option("--weights", m.weights, "Traffic split between the variants, e.g. 90,10 (default: equal)")->delimiter(',');
  cmd.add_option("--precision", m.precision, "Inference precision of every variant")->default_str("fp32");
  cmd.add_option("--threads", m.threads, "Intra-op threads per instance (0 = framework default)");
  cmd.add_option("--instances", m.instances, "Sessions per variant, each on its own worker thread")->default_str("1");
  cmd.add_option("--slots", m.slots, "Language models: sequences decoded together (continuous batching)")->default_str("4");
  cmd.add_option("--ctx", m.context, "Language models: context tokens per sequence (0 = the model's)");
  cmd.add_option("--max-batch", m.batching.max_batch_size, "Dynamic batching: rows per batch (0 = off)");
  cmd.add_option("--batch-delay-us", m.batching.max_queue_delay_us, "Dynamic batching: how long a request may wait for others");
  cmd.add_option("--preferred-batch", m.batching.preferred_batch_sizes, "Dynamic batching: preferred batch sizes")
      ->delimiter(',');
  cmd.add_option("--max-queue", m.max_queue, "Waiting requests per variant before 429")->default_str("128");
  cmd.add_option("--timeout-ms", m.timeout_ms, "Per-request timeout, queue included (0 = none)");
  cmd.add_option("--inline-below-us", m.inline_below_us,
                 "Unbatched models faster than this run on the receiving thread when idle (0 = always on workers)")
      ->default_str("200")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option_function<std::vector<std::string>>(
      "--opt",
      [&m](const std::vector<std::string>& opts) {
        for (const auto& opt : opts) {
          auto [key, value] = harness::split_assignment(opt, "--opt");
          m.options[key] = value;
        }
      },
      "Framework-specific option KEY=VALUE for every variant (repeatable)");
  server_flag(cmd, o, "--host", &serve::ServeConfig::host, "Address to listen on");
  server_flag(cmd, o, "--port", &serve::ServeConfig::http_port, "HTTP port (0 = any free port)");
  auto* grpc =
      server_flag(cmd, o, "--grpc-port", &serve::ServeConfig::grpc_port, "KServe v2 gRPC port (0 = any free port, -1 = no gRPC)")
          ->check(CLI::Range(-1, 65535));
  cmd.add_flag_callback(
         "--no-grpc", [&o] { o.server_settings.push_back([](serve::ServeConfig& c) { c.grpc_port = -1; }); },
         "Serve no gRPC (as --grpc-port -1)")
      ->excludes(grpc);
  server_flag(cmd, o, "--io-threads", &serve::ServeConfig::io_threads, "HTTP io threads (0 = one per core)");
  server_flag(cmd, o, "--max-body-mb", &serve::ServeConfig::max_body_mb, "Largest request body accepted (beyond: 413)");
  server_flag(cmd, o, "--max-connections", &serve::ServeConfig::max_connections,
              "Connections served at once; beyond: 503 and closed (0 = as many as the open-file limit allows)");
  server_flag(cmd, o, "--read-timeout-s", &serve::ServeConfig::read_timeout_s,
              "A request's body must arrive within this once its headers did (408)");
  server_flag(cmd, o, "--idle-timeout-s", &serve::ServeConfig::idle_timeout_s,
              "A connection waiting this long for a request's headers is closed (408 if the request had begun)");
  server_flag(cmd, o, "--write-timeout-s", &serve::ServeConfig::write_timeout_s,
              "A client that does not read its answer this long is dropped");
  cmd.add_option("--out", o.out, "Where each variant's served latencies are written at exit (<out>/<time>-serve/)")
      ->default_str("results");
  server_flag(cmd, o, "--drain-s", &serve::ServeConfig::drain_s, "On SIGTERM, how long in-flight requests may finish");
}

serve::ServeConfig serve_config(const ServeOptions& o) {
  auto config = o.config_file.empty() ? serve::single_model_config(o.model) : serve::load_serve_config(o.config_file);
  for (const auto& set : o.server_settings) set(config);
  config.results_dir = o.out;
  return config;
}

void add_serve_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("serve", "Serve models over KServe v2 (HTTP and gRPC) with dynamic batching, A/B variants and /metrics");
  static ServeOptions o;
  define_serve_flags(*cmd, o);
  cmd->callback([&exit_code] {
    scaleout::refuse_several_ranks("serve");  // N servers on one port would fight over it
    exit_code = serve::run_serve(serve_config(o));
  });
}

}  // namespace infermark::cli

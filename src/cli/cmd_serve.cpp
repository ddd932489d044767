// `infermark serve`: puts models behind the KServe v2 protocol (HTTP and gRPC) and the OpenAI
// API with dynamic batching, A/B variants and Prometheus metrics. Wiring only: the server lives in src/serve/.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "harness/run_options.hpp"
#include "scaleout/single_process_guard.hpp"
#include "serve/serve_main.hpp"

namespace infermark::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("serve", "Serve models over KServe v2 (HTTP and gRPC) with dynamic batching, A/B variants and /metrics");
  static std::string config_file;
  static serve::SingleModelFlags flags;
  static std::vector<std::string> opts;
  static std::string host = "127.0.0.1";
  static std::uint16_t port = 8000;
  static int grpc_port = 8001;
  static bool no_grpc = false;
  static int io_threads = 0;
  static double drain_s = 30;
  static std::size_t max_body_mb = 64;
  static std::size_t max_connections = 0;
  static int read_timeout_s = 30, idle_timeout_s = 75, write_timeout_s = 30;
  static std::string out = "results";
  cmd->add_option("--config", config_file, "Model repository file (YAML: models, variants, batching; see docs/serving.md)");
  cmd->add_option("--model", flags.model_file, "One model file to serve (instead of --config)");
  cmd->add_option("--name", flags.name, "The served model's name (default: the file's stem)");
  cmd->add_option("-b,--backends", flags.backends, "Backends, one variant each (named after the backend)")->delimiter(',');
  cmd->add_option("--weights", flags.weights, "Traffic split between the variants, e.g. 90,10 (default: equal)")->delimiter(',');
  cmd->add_option("--precision", flags.precision, "Inference precision of every variant")->default_str("fp32");
  cmd->add_option("--threads", flags.threads, "Intra-op threads per instance (0 = framework default)");
  cmd->add_option("--instances", flags.instances, "Sessions per variant, each on its own worker thread")->default_str("1");
  cmd->add_option("--slots", flags.slots, "Language models: sequences decoded together (continuous batching)")->default_str("4");
  cmd->add_option("--ctx", flags.context, "Language models: context tokens per sequence (0 = the model's)");
  cmd->add_option("--max-batch", flags.batching.max_batch_size, "Dynamic batching: rows per batch (0 = off)");
  cmd->add_option("--batch-delay-us", flags.batching.max_queue_delay_us, "Dynamic batching: how long a request may wait for others");
  cmd->add_option("--preferred-batch", flags.batching.preferred_batch_sizes, "Dynamic batching: preferred batch sizes")
      ->delimiter(',');
  cmd->add_option("--max-queue", flags.max_queue, "Waiting requests per variant before 429")->default_str("128");
  cmd->add_option("--timeout-ms", flags.timeout_ms, "Per-request timeout, queue included (0 = none)");
  cmd->add_option("--inline-below-us", flags.inline_below_us,
                  "Unbatched models faster than this run on the receiving thread when idle (0 = always on workers)")
      ->default_str("200")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--opt", opts, "Framework-specific option KEY=VALUE for every variant (repeatable)");
  cmd->add_option("--host", host, "Address to listen on")->default_str("127.0.0.1");
  cmd->add_option("--port", port, "HTTP port (0 = any free port)")->default_str("8000");
  auto* grpc_flag = cmd->add_option("--grpc-port", grpc_port, "KServe v2 gRPC port (0 = any free port, -1 = no gRPC)")
                        ->default_str("8001")
                        ->check(CLI::Range(-1, 65535));
  cmd->add_flag("--no-grpc", no_grpc, "Serve no gRPC (as --grpc-port -1)")->excludes(grpc_flag);
  cmd->add_option("--io-threads", io_threads, "HTTP io threads (0 = one per core)");
  cmd->add_option("--max-body-mb", max_body_mb, "Largest request body accepted (beyond: 413)")->default_str("64");
  cmd->add_option("--max-connections", max_connections,
                  "Connections served at once; beyond: 503 and closed (0 = as many as the open-file limit allows)");
  cmd->add_option("--read-timeout-s", read_timeout_s, "A request's body must arrive within this once its headers did (408)")
      ->default_str("30");
  cmd->add_option("--idle-timeout-s", idle_timeout_s,
                  "A connection waiting this long for a request's headers is closed (408 if the request had begun)")
      ->default_str("75");
  cmd->add_option("--write-timeout-s", write_timeout_s, "A client that does not read its answer this long is dropped")
      ->default_str("30");
  cmd->add_option("--out", out, "Where each variant's served latencies are written at exit (<out>/serve-<time>/)")
      ->default_str("results");
  cmd->add_option("--drain-s", drain_s, "On SIGTERM, how long in-flight requests may finish")->default_str("30");
  cmd->callback([cmd, &exit_code] {
    scaleout::refuse_several_ranks("serve");  // N servers on one port would fight over it
    if (!config_file.empty() && !flags.model_file.empty()) throw Error("--config and --model: give one of them");
    serve::ServeConfig config;
    if (!config_file.empty()) {
      config = serve::load_serve_config(config_file);
    } else {
      for (const auto& opt : opts) {
        auto [key, value] = harness::split_assignment(opt, "--opt");
        flags.options[key] = value;
      }
      config = serve::single_model_config(flags);
    }
    // Flags given on the command line override the file's server section.
    if (config_file.empty() || cmd->count("--host")) config.host = host;
    if (config_file.empty() || cmd->count("--port")) config.http_port = port;
    if (config_file.empty() || cmd->count("--grpc-port")) config.grpc_port = grpc_port;
    if (no_grpc) config.grpc_port = -1;
    if (config_file.empty() || cmd->count("--io-threads")) config.io_threads = io_threads;
    if (config_file.empty() || cmd->count("--drain-s")) config.drain_s = drain_s;
    if (config_file.empty() || cmd->count("--max-body-mb")) config.max_body_mb = max_body_mb;
    if (config_file.empty() || cmd->count("--max-connections")) config.max_connections = max_connections;
    if (config_file.empty() || cmd->count("--read-timeout-s")) config.read_timeout_s = read_timeout_s;
    if (config_file.empty() || cmd->count("--idle-timeout-s")) config.idle_timeout_s = idle_timeout_s;
    if (config_file.empty() || cmd->count("--write-timeout-s")) config.write_timeout_s = write_timeout_s;
    config.results_dir = out;
    exit_code = serve::run_serve(config);
  });
}

}  // namespace infermark::cli

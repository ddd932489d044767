// `infermark load URL`: a remote inference server — KServe v2 / Triton, or an OpenAI-compatible
// LLM server — measured under any scenario of `run`; one result per concurrency level, in the same
// schema as in-process cells (backend "remote"), so report, compare and recommend read them.
#include <fmt/core.h>

#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/load_command.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "remote/load_request.hpp"

namespace infermark::cli {
namespace {

std::string read_body_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CLI::ValidationError("--body-file", "cannot read '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

void define_load_flags(CLI::App& cmd, LoadOptions& o) {
  auto& r = o.request;
  cmd.add_option("url", r.url, "The server, http://HOST:PORT[/prefix] (kserve-grpc: HOST:PORT)")->required();
  cmd.add_option("--protocol", r.protocol,
                 "kserve (KServe v2 / Triton over HTTP), kserve-grpc, openai, or http (the URL's path, one fixed request)")
      ->transform(CLI::CheckedTransformer(remote::protocol_names()))
      ->default_str("kserve");
  cmd.add_option("--model", r.model, "The served model's name");
  cmd.add_option("--model-version", r.version, "kserve: the model version (default: the server's)");
  cmd.add_option("--tensors", r.tensors,
                 "kserve: auto (the binary tensor extension where the server lists it, else JSON), binary or json")
      ->transform(CLI::CheckedTransformer(remote::tensor_encoding_names()))
      ->default_str("auto");
  cmd.add_option("--endpoint", r.endpoint, "openai: chat (/v1/chat/completions) or completions (/v1/completions)")
      ->transform(CLI::CheckedTransformer(remote::endpoint_names()))
      ->default_str("chat");
  cmd.add_flag_callback(
      "--no-stream", [&r] { r.stream = false; }, "openai: ask for whole answers (TTFT is then the whole request)");
  cmd.add_flag_callback(
      "--no-ignore-eos", [&r] { r.ignore_eos = false; },
      "openai: let the model stop early (default: ignore_eos, every request generates --output-tokens)");
  cmd.add_option("--prompts", r.prompts_file,
                 "openai: JSONL prompts ({\"prompt\"}, {\"text\"} as aiperf, {\"messages\"} or ShareGPT {\"conversations\"}); "
                 "default synthetic prompts of --prompt-tokens words");
  cmd.add_option("--tokenizer", r.tokenizer,
                 "openai: the served model (GGUF file, .genai or .ov folder): its own tokenizer counts each answer's output "
                 "tokens (default: the server's usage, else one per streamed piece)");
  cmd.add_option_function<std::vector<std::string>>(
      "--body-field", [&r](const std::vector<std::string>& fields) { r.extra_fields = remote::body_fields_of(fields); },
      "openai: extra request field KEY=JSON, e.g. grammar=\"root ::= [a-z ]+\" (repeatable)");
  cmd.add_option("--method", r.plain.method, "http: the request method")
      ->transform(CLI::CheckedTransformer(std::vector<std::pair<std::string, remote::HttpMethod>>{
          {"GET", remote::HttpMethod::kGet}, {"POST", remote::HttpMethod::kPost}, {"PUT", remote::HttpMethod::kPut}}))
      ->default_str("GET");
  cmd.add_option_function<std::string>(
      "--body-file", [&r](const std::string& path) { r.plain.body = read_body_file(path); },
      "http: a file whose bytes every request sends as its body");
  cmd.add_option("--content-type", r.plain.content_type, "http: the body's Content-Type");
  cmd.add_option_function<std::vector<std::string>>(
      "--header",
      [&r](const std::vector<std::string>& headers) {
        for (const auto& h : headers) r.headers.push_back(remote::header_of(h));
      },
      "HTTP header NAME=VALUE on every request, e.g. for auth (never written to results)");
  cmd.add_option("--scrape", r.scrape_url,
                 "The server's Prometheus endpoint (e.g. http://HOST:8002/metrics), sampled during the run into the result");
  cmd.add_option("--scrape-interval-s", r.scrape_interval_s, "Seconds between --scrape samples")->capture_default_str();
  cmd.add_option("--timeout-s", r.timeout_s, "Per-request timeout in seconds (a timed-out request is an error)")
      ->capture_default_str();
  cmd.add_option("--client-threads", r.io_threads, "io threads of the HTTP client")->capture_default_str();
  cmd.add_option("--out", o.out, "Results folder (one result per concurrency level under <out>/<time>-<model>/)")
      ->capture_default_str();
  add_input_flags(cmd, o.measurement);
  cmd.get_option("--concurrency")
      ->description(
          "Clients (closed loop), or the most requests in flight (open loop; default 256); a list gives one "
          "result each");
}

void add_load_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("load", "Measure a remote inference server (KServe v2 / Triton, OpenAI API) with any scenario");
  static LoadOptions o;
  define_load_flags(*cmd, o);
  cmd->callback([&exit_code] {
    try {
      exit_code = scaleout::run_load_job(o, install_stop_handler());
    } catch (const Error& e) {
      fmt::print(stderr, "infermark load: {}\n", e.what());
      exit_code = 2;
    }
  });
}

}  // namespace infermark::cli

// `infermark load URL`: a remote inference server — KServe v2 / Triton, or an OpenAI-compatible
// LLM server — measured under any scenario of `run`; one result per concurrency level, in the same
// schema as in-process cells (backend "remote"), so report, compare and recommend read them.
#include <fmt/core.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/load_command.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "remote/load_request.hpp"
#include "result/results_folder.hpp"
#include "scaleout/mpi_world.hpp"
#include "scaleout/rank_coordination.hpp"

namespace infermark::cli {
namespace {

std::string cell_file_name(const result::RunResult& result, int concurrency) {
  std::string name = "remote-" + (result.model.name.empty() ? std::string("model") : result.model.name);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name + (concurrency > 0 ? "-c" + std::to_string(concurrency) : "") + ".json";
}

void print_cell(const result::RunResult& r, const std::string& destination) {
  auto line = fmt::format("{} {} {}", r.backend.framework, r.model.name, result::name_of(r.status));
  if (r.latency_ms)
    line += fmt::format("  P50 {:.3f} ms  P99 {:.3f} ms  {:.1f} req/s", r.latency_ms->at(50).value, r.latency_ms->at(99).value,
                        r.throughput.queries_per_s);
  if (r.generation && r.generation->ttft_ms)
    line += fmt::format("  TTFT P50 {:.1f} ms  {:.1f} output tokens/s", r.generation->ttft_ms->at(50).value,
                        r.generation->output_tokens_per_s);
  if (r.remote && r.remote->errors) line += fmt::format("  errors {}", r.remote->errors->total);
  fmt::print("{}  -> {}\n", line, destination);
  if (!r.error.empty()) fmt::print(stderr, "infermark load: {}\n", r.error);
  std::fflush(stdout);
}

std::string read_body_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CLI::ValidationError("--body-file", "cannot read '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Rank 0 alone writes: it creates the results folder, and every rank learns whether it could.
std::filesystem::path results_folder(const LoadOptions& o, scaleout::World& world) {
  std::filesystem::path folder;
  std::string error;
  if (world.is_root()) try {
      folder = result::create_results_folder(o.out, o.request.model.empty() ? std::string("remote") : o.request.model,
                                             std::time(nullptr));
    } catch (const Error& e) {
      error = e.what();
    }
  if (!world.all(error.empty())) throw Error(error.empty() ? "--out: rank 0 could not create the results folder" : error);
  return folder;
}

int run_load(const LoadOptions& o) {
  const auto& stop = install_stop_handler();
  auto& world = scaleout::World::get();
  auto ranks = scaleout::coordination_of(world);
  const bool as_ranks = scaleout::records_ranks(world);
  const bool root = world.is_root();
  remote::check_remote_request(o.request, remote::kLoadFlagNames);  // a bad URL fails before anything else
  auto measurement = o.measurement;
  measurement.model = o.request.url;
  const auto folder = results_folder(o, world);
  bool failed = false;
  for (const int level : harness::concurrency_levels(measurement)) {
    // Every rank measures each level, or none does (a rank alone would wait in a collective).
    if (!world.all(!stop.load())) break;
    auto request = o.request;
    request.cell = remote::load_cell(measurement, level);
    auto& scenario = request.cell.scenario;
    // What cannot be split over the ranks fails here, the same on every rank, before any collective.
    if (world.distributed()) loadgen::share_for_rank(scenario, world.rank(), world.size());
    if (root) {
      fmt::print("load {} ({}) {}{} ...\n", request.url, remote::name_of(request.protocol), loadgen::name_of(scenario.name),
                 as_ranks ? fmt::format(" on {} ranks", world.size()) : std::string());
      std::fflush(stdout);
    }
    const auto result = remote::measure_remote(request, &stop, {}, as_ranks ? &ranks : nullptr);
    if (!root) {  // rank 0 prints and writes the merged result; the others speak only of their own failure
      if (result.status != result::CellStatus::kOk)
        fmt::print(stderr, "infermark load: rank {}: {}\n", world.rank(), result.error);
      failed = failed || result.status != result::CellStatus::kOk;
      continue;
    }
    const auto path = folder / cell_file_name(result, level);
    // A full disk loses the file, not the figures: they are printed, and the next level still runs.
    std::string save_error;
    try {
      result::write_run_result(result, path.string());
    } catch (const Error& e) {
      save_error = e.what();
    }
    print_cell(result, save_error.empty() ? path.string() : "NOT SAVED");
    if (!save_error.empty()) fmt::print(stderr, "infermark load: {}\n", save_error);
    failed = failed || result.status != result::CellStatus::kOk || !save_error.empty();
  }
  if (stop.load()) return 130;
  return failed ? 1 : 0;
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
      ->transform(CLI::CheckedTransformer(std::vector<std::pair<std::string, remote::OpenAiEndpoint>>{
          {"chat", remote::OpenAiEndpoint::kChat}, {"completions", remote::OpenAiEndpoint::kCompletions}}))
      ->default_str("chat");
  cmd.add_flag_callback(
      "--no-stream", [&r] { r.stream = false; }, "openai: ask for whole answers (TTFT is then the whole request)");
  cmd.add_flag_callback(
      "--no-ignore-eos", [&r] { r.ignore_eos = false; },
      "openai: let the model stop early (default: ignore_eos, every request generates --output-tokens)");
  cmd.add_option("--prompts", r.prompts_file,
                 "openai: JSONL prompts ({\"prompt\"}, {\"text\"} as aiperf, {\"messages\"} or ShareGPT {\"conversations\"}); "
                 "default synthetic prompts of --prompt-tokens words");
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
      exit_code = run_load(o);
    } catch (const Error& e) {
      fmt::print(stderr, "infermark load: {}\n", e.what());
      exit_code = 2;
    }
  });
}

}  // namespace infermark::cli

// `infermark load URL`: a remote inference server — KServe v2 / Triton, or an OpenAI-compatible
// LLM server — measured under any scenario of `run`; one result per concurrency level, in the same
// schema as in-process cells (backend "remote"), so report, compare and recommend read them.
#include <fmt/core.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "harness/run_options.hpp"
#include "remote/measure_remote.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::cli {
namespace {

struct LoadOptions {
  remote::RemoteRequest request;
  harness::RunOptions measurement;
  std::vector<std::string> headers;      // K=V
  std::vector<std::string> body_fields;  // KEY=JSON
  bool no_stream = false;
  bool no_ignore_eos = false;
  std::string body_file;  // http: the request body
  std::string out = "results";
  const CLI::App* cmd = nullptr;
};


// "KEY=VALUE" -> header; never printed or recorded (it may carry a token).
net::HttpHeader header_of(const std::string& text) {
  auto [name, value] = harness::split_assignment(text, "--header");
  return {name, value};
}

nlohmann::json body_fields(const std::vector<std::string>& fields) {
  auto extra = nlohmann::json::object();
  for (const auto& field : fields) {
    auto [key, text] = harness::split_assignment(field, "--body-field");
    auto value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;  // not JSON: a plain string
    extra[key] = value;
  }
  return extra;
}

std::string cell_file_name(const result::RunResult& result, int concurrency) {
  std::string name = "remote-" + (result.model.name.empty() ? std::string("model") : result.model.name);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name + (concurrency > 0 ? "-c" + std::to_string(concurrency) : "") + ".json";
}

void print_cell(const result::RunResult& r, const std::string& destination) {
  auto line = fmt::format("{} {} {}", r.backend.framework, r.model.name, result::name_of(r.status));
  if (r.latency_ms)
    line += fmt::format("  P50 {:.3f} ms  P99 {:.3f} ms  {:.1f} req/s", r.latency_ms->at(50).value,
                        r.latency_ms->at(99).value, r.throughput.queries_per_s);
  if (r.generation && r.generation->ttft_ms)
    line += fmt::format("  TTFT P50 {:.1f} ms  {:.1f} output tokens/s", r.generation->ttft_ms->at(50).value,
                        r.generation->output_tokens_per_s);
  if (!r.remote.is_null() && r.remote.contains("errors")) line += fmt::format("  errors {}", json_text(r.remote["errors"]["total"]));
  fmt::print("{}  -> {}\n", line, destination);
  if (!r.error.empty()) fmt::print(stderr, "infermark load: {}\n", r.error);
  std::fflush(stdout);
}

std::string read_body_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("--body-file: cannot read '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The MPI job's collectives for a distributed run (`mpirun -np N infermark load`).
loadgen::RankCoordination coordination_of(scaleout::World& world) {
  loadgen::RankCoordination ranks;
  ranks.rank = world.rank();
  ranks.ranks = world.size();
  ranks.host = world.host();
  ranks.all = [&world](bool mine) { return world.all(mine); };
  ranks.sum = [&world](double mine) { return world.sum(mine); };
  ranks.start_together = [&world] { scaleout::sleep_until(world.common_start_ns()); };
  ranks.gather = [&world](const std::string& mine) { return world.gather(mine); };
  return ranks;
}

// Started by an MPI launcher (mpirun -np 1 included): the run is recorded as ranks, with a
// "scaleout" section that says whether each kept up.
bool launched_as_ranks(const scaleout::World& world) {
  return world.distributed() || std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

int run_load(LoadOptions& o) {
  const auto& stop = install_stop_handler();
  auto& world = scaleout::World::get();
  const auto ranks = coordination_of(world);
  const bool root = world.is_root();
  auto request = o.request;
  request.stream = !o.no_stream;
  request.ignore_eos = !o.no_ignore_eos;
  request.extra_fields = body_fields(o.body_fields);
  for (const auto& h : o.headers) request.headers.push_back(header_of(h));
  if (!o.body_file.empty()) request.plain.body = read_body_file(o.body_file);
  if (request.io_threads < 1) throw Error("--client-threads: at least 1");
  if (!(request.timeout_s > 0)) throw Error("--timeout-s: must be above 0");
  if (request.protocol != remote::RemoteProtocol::kKServeGrpc)
    net::parse_http_url(request.url, "URL");  // a bad URL fails before anything else
  const bool needs_model = request.protocol == remote::RemoteProtocol::kKServe || request.protocol == remote::RemoteProtocol::kKServeGrpc;
  if (needs_model && request.model.empty())
    throw Error("--model: name the model to load (its metadata at /v2/models/MODEL gives the inputs)");

  o.measurement.model = request.url;
  const auto levels = harness::concurrency_levels(o.measurement);
  const auto base = harness::run_folder(o.out, {request.model.empty() ? std::string("remote") : request.model}, std::time(nullptr));
  auto folder = base;
  std::string folder_error;
  if (root) try {  // only rank 0 writes
      for (int n = 2; std::filesystem::exists(folder); ++n)  // two runs in one second keep both results
        folder = base.string() + "-" + std::to_string(n);
      std::filesystem::create_directories(folder);
    } catch (const std::filesystem::filesystem_error& e) {
      folder_error = std::string("--out: ") + e.what();
    }
  if (!world.all(folder_error.empty()))
    throw Error(folder_error.empty() ? "--out: rank 0 could not create the results folder" : folder_error);
  bool failed = false;
  for (const int level : levels) {
    // Every rank measures each level, or none does (a rank alone would wait in a collective).
    if (!world.all(!stop.load())) break;
    request.cell = harness::to_cell(o.measurement, "remote", 0, level);
    auto& scenario = request.cell.scenario;
    // --concurrency N without a scenario means N clients, as for language models in `run`.
    if (scenario.name == loadgen::Scenario::kSingleStream && scenario.concurrency > 1)
      scenario.name = loadgen::Scenario::kConcurrency;
    if (level == 0 && loadgen::is_open_loop(scenario)) scenario.concurrency = remote::kDefaultOpenLoopInFlight;
    request.cell.isolation = "in-process (the server runs elsewhere)";
    // What cannot be split over the ranks fails here, the same on every rank, before any collective.
    if (world.distributed()) loadgen::share_for_rank(scenario, world.rank(), world.size());
    if (root) {
      fmt::print("load {} ({}) {}{} ...\n", request.url, remote::name_of(request.protocol), loadgen::name_of(scenario.name),
                 launched_as_ranks(world) ? fmt::format(" on {} ranks", world.size()) : std::string());
      std::fflush(stdout);
    }
    const auto result = remote::measure_remote(request, &stop, {}, launched_as_ranks(world) ? &ranks : nullptr);
    if (!root) {  // rank 0 prints and writes the merged result; the others speak only of their own failure
      if (result.status != result::CellStatus::kOk) fmt::print(stderr, "infermark load: rank {}: {}\n", world.rank(), result.error);
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

void add_load_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("load", "Measure a remote inference server (KServe v2 / Triton, OpenAI API) with any scenario");
  static LoadOptions o;
  cmd->add_option("url", o.request.url, "The server, http://HOST:PORT[/prefix] (kserve-grpc: HOST:PORT)")->required();
  cmd->add_option("--protocol", o.request.protocol,
                  "kserve (KServe v2 / Triton over HTTP), kserve-grpc, openai, or http (the URL's path, one fixed request)")
      ->transform(CLI::CheckedTransformer(remote::protocol_names()))
      ->default_str("kserve");
  cmd->add_option("--model", o.request.model, "The served model's name");
  cmd->add_option("--model-version", o.request.version, "kserve: the model version (default: the server's)");
  cmd->add_option("--tensors", o.request.tensors,
                  "kserve: auto (the binary tensor extension where the server lists it, else JSON), binary or json")
      ->transform(CLI::CheckedTransformer(remote::tensor_encoding_names()))
      ->default_str("auto");
  cmd->add_option("--endpoint", o.request.endpoint, "openai: chat (/v1/chat/completions) or completions (/v1/completions)")
      ->transform(CLI::CheckedTransformer(std::vector<std::pair<std::string, remote::OpenAiEndpoint>>{
          {"chat", remote::OpenAiEndpoint::kChat}, {"completions", remote::OpenAiEndpoint::kCompletions}}))
      ->default_str("chat");
  cmd->add_flag("--no-stream", o.no_stream, "openai: ask for whole answers (TTFT is then the whole request)");
  cmd->add_flag("--no-ignore-eos", o.no_ignore_eos, "openai: let the model stop early (default: ignore_eos, every request "
                                                    "generates --output-tokens)");
  cmd->add_option("--prompts", o.request.prompts_file,
                  "openai: JSONL prompts ({\"prompt\"}, {\"text\"} as aiperf, {\"messages\"} or ShareGPT {\"conversations\"}); default synthetic "
                  "prompts of --prompt-tokens words");
  cmd->add_option("--body-field", o.body_fields, "openai: extra request field KEY=JSON, e.g. grammar=\"root ::= [a-z ]+\" (repeatable)");
  cmd->add_option("--method", o.request.plain.method, "http: the request method")
      ->transform(CLI::CheckedTransformer(std::vector<std::pair<std::string, remote::HttpMethod>>{
          {"GET", remote::HttpMethod::kGet}, {"POST", remote::HttpMethod::kPost},
          {"PUT", remote::HttpMethod::kPut}}))
      ->default_str("GET");
  cmd->add_option("--body-file", o.body_file, "http: a file whose bytes every request sends as its body");
  cmd->add_option("--content-type", o.request.plain.content_type, "http: the body's Content-Type");
  cmd->add_option("--header", o.headers, "HTTP header NAME=VALUE on every request, e.g. for auth (never written to results)");
  cmd->add_option("--scrape", o.request.scrape_url,
                  "The server's Prometheus endpoint (e.g. http://HOST:8002/metrics), sampled during the run into the result");
  cmd->add_option("--scrape-interval-s", o.request.scrape_interval_s, "Seconds between --scrape samples")
      ->capture_default_str();
  cmd->add_option("--timeout-s", o.request.timeout_s, "Per-request timeout in seconds (a timed-out request is an error)")
      ->capture_default_str();
  cmd->add_option("--client-threads", o.request.io_threads, "io threads of the HTTP client")->capture_default_str();
  cmd->add_option("--out", o.out, "Results folder (one result per concurrency level under <out>/<time>-<model>/)")
      ->capture_default_str();
  add_input_flags(*cmd, o.measurement);
  cmd->get_option("--concurrency")
      ->description("Clients (closed loop), or the most requests in flight (open loop; default 256); a list gives one "
                    "result each");
  o.cmd = cmd;
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

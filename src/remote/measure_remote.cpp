#include "remote/measure_remote.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "core/named_enum.hpp"
#include "harness/measure_generation.hpp"
#include "loadgen/input_set_library.hpp"
#include "loadgen/rank_outcome.hpp"
#include "loadgen/rank_share.hpp"
#include "probes/energy_target.hpp"
#include "probes/resource_sampler.hpp"
#include "remote/kserve_grpc_system.hpp"
#include "remote/metrics_scraper.hpp"

namespace infermark::remote {
namespace {

using nlohmann::json;

// The identity an OpenAI server gives: GET /v1/models lists model ids (and llama-server its
// owned_by); a server without it is still measured.
json openai_identity(net::HttpClient& client) {
  const auto response = client.send_and_wait({boost::beast::http::verb::get, "/v1/models", {}, {}});
  if (response.error != net::TransportError::kNone) throw Error(client.endpoint().url + "/v1/models: " + response.error_text);
  json ids = json::array();
  const auto j = json::parse(response.body, nullptr, false);
  if (response.status == 200 && j.is_object() && j.contains("data") && j["data"].is_array())
    for (const auto& model : j["data"])
      if (model.is_object() && model.contains("id") && model["id"].is_string()) ids.push_back(model["id"]);
  return {{"models", ids}, {"server", std::string(response.header("Server"))}};
}

// Mean and standard deviation of the prompt tokens the server reported per request.
result::TokenLengths measured_prompt_tokens(const std::vector<loadgen::RequestRecord>& requests) {
  result::TokenLengths lengths;
  if (requests.empty()) return lengths;
  double sum = 0, squares = 0;
  for (const auto& r : requests) {
    sum += r.prompt_tokens;
    squares += static_cast<double>(r.prompt_tokens) * r.prompt_tokens;
  }
  const auto n = static_cast<double>(requests.size());
  lengths.total = static_cast<long long>(sum);
  lengths.mean = sum / n;
  lengths.stddev = std::sqrt(std::max(0.0, squares / n - lengths.mean * lengths.mean));
  return lengths;
}

// What a run needs from the server's side, prepared before any load: the client, the system
// under test and the result's "remote" section so far.
struct PreparedRemote {
  std::unique_ptr<net::HttpClient> http;               // before `system`, which holds a reference to it
  std::unique_ptr<harness::ModelTokenizer> tokenizer;  // likewise (openai with --tokenizer)
  std::unique_ptr<loadgen::SystemUnderTest> system;
  OpenAiSystem* openai = nullptr;
  result::RemoteRecord remote;
  int lanes = 0;
};

PreparedRemote prepare_remote(const RemoteRequest& request, const loadgen::ScenarioSpec& spec, result::RunResult& result,
                              probes::Environment& environment, const std::function<void(std::string)>& enter,
                              RemoteErrors& errors) {
  net::ClientOptions options;
  options.io_threads = request.io_threads;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(request.timeout_s * 1000));
  options.headers = request.headers;
  const bool grpc = request.protocol == RemoteProtocol::kKServeGrpc;
  // gRPC speaks to HOST:PORT on its own channel; the HTTP protocols share the Beast client.
  std::unique_ptr<net::HttpClient> http;
  if (!grpc) http = std::make_unique<net::HttpClient>(net::parse_http_url(request.url, "URL"), options);
  const auto address = grpc ? grpc_target(request.url, "URL") : http->endpoint().url;
  const int lanes = loadgen::lanes_needed(spec, environment.logical_cores);
  result.backend.name = "remote";
  result.model.name = request.model;
  result.model.path = address;
  result.model.format = std::string(name_of(request.protocol));
  result::RemoteRecord remote;
  remote.protocol = name_of(request.protocol);
  remote.url = address;
  remote.client = {grpc ? 0 : request.io_threads, request.timeout_s, lanes};

  enter("reading the server's metadata");
  std::unique_ptr<loadgen::SystemUnderTest> system;
  std::unique_ptr<harness::ModelTokenizer> tokenizer;
  OpenAiSystem* openai = nullptr;
  if (request.protocol == RemoteProtocol::kHttp) {
    result.backend.framework = "HTTP endpoint";
    if (result.model.name.empty()) result.model.name = http->endpoint().prefix.empty() ? "/" : http->endpoint().prefix;
    remote.request = result::PlainHttpRequest{std::string(boost::beast::http::to_string(verb_of(request.plain.method))),
                                              request.plain.body.size()};
    system = std::make_unique<PreparedHttpSystem>(
        *http, std::vector<net::PreparedRequestPtr>{prepare_plain_request(*http, request.plain)},
        std::make_unique<loadgen::SingleSample>(), lanes, errors);
  } else if (request.protocol != RemoteProtocol::kOpenAi) {
    std::unique_ptr<KServeGrpcSystem> over_grpc;
    if (grpc) over_grpc = std::make_unique<KServeGrpcSystem>(address, request.timeout_s, errors);
    const auto model =
        grpc ? over_grpc->read_model(request.model, request.version) : read_kserve_model(*http, request.model, request.version);
    result.backend.framework = model.server_name.empty() ? "KServe v2 server" : model.server_name;
    result.backend.version = model.server_version;
    result.model.name = model.name;
    result.model.inputs = model.inputs;
    result.model.outputs = model.outputs;
    remote.server = json{{"name", model.server_name}, {"version", model.server_version}, {"platform", model.platform}};
    remote.model_version = model.version;
    const auto tensors = choose_tensor_encoding(request.tensors, model);
    remote.tensors = grpc ? "raw_input_contents" : tensors.why;
    if (!grpc) (*remote.server)["extensions"] = model.extensions;
    enter("preparing requests");
    auto sets = generate_input_sets(model.inputs, request.cell.inputs);
    if (grpc) {
      over_grpc->prepare(model, sets, lanes);
      system = std::move(over_grpc);
    } else {
      auto requests = prepare_kserve_requests(*http, model, sets, tensors.binary);
      system = std::make_unique<PreparedHttpSystem>(*http, std::move(requests), std::make_unique<loadgen::InputSetLibrary>(sets),
                                                    lanes, errors);
    }
  } else {
    if (request.model.empty()) throw Error("--model: an OpenAI server needs the model name requests carry");
    const auto identity = openai_identity(*http);
    result.backend.framework =
        identity["server"].get<std::string>().empty() ? "OpenAI-compatible server" : identity["server"].get<std::string>();
    remote.server = identity;
    remote.endpoint = std::string(name_of(request.endpoint));
    remote.stream = request.stream;
    remote.ignore_eos = request.ignore_eos;
    enter("preparing prompts");
    const loadgen::LengthDistribution prompt_words{spec.prompt_tokens, spec.prompt_tokens_stddev};
    const loadgen::LengthDistribution output_tokens{spec.output_tokens, spec.output_tokens_stddev};
    if (spec.trace.enabled() && !request.prompts_file.empty())
      throw Error("--prompts: a replayed trace brings its own prompts (leave out --prompts or --trace)");
    if (spec.conversation.enabled() && !request.prompts_file.empty())
      throw Error("--prompts: conversations are drawn turn by turn (leave out --prompts or --turns)");
    if (!spec.dataset.empty() && !request.prompts_file.empty())
      throw Error("--prompts: --dataset cuts the prompts from its text (leave out one of them)");
    const auto words = spec.dataset.empty() ? PromptWords::common() : PromptWords::corpus(spec.dataset);
    auto prompts = spec.trace.enabled() ? prompts_from_trace(*loadgen::load_trace(spec.trace), spec.seed, words)
                   : spec.conversation.enabled()
                       ? conversation_prompts(prompt_words, output_tokens, spec.conversation, spec.seed, words)
                   : request.prompts_file.empty() ? synthetic_prompts(prompt_words, output_tokens, spec.seed, 256, words)
                                                  : prompts_from_jsonl(request.prompts_file, output_tokens, spec.seed);
    add_shared_prefixes(prompts, spec.shared_prefix, spec.seed, words);
    remote.prompts =
        spec.trace.enabled()
            ? result::PromptSource{"trace " + spec.trace.file + ", words: " + words.describe(), std::nullopt, prompts.size()}
        : spec.conversation.enabled()
            ? result::PromptSource{"conversations (" + spec.conversation.describe() + "), words: " + words.describe(),
                                   prompt_words.describe(), prompts.size()}
        : request.prompts_file.empty() ? result::PromptSource{words.describe(), prompt_words.describe(), std::nullopt}
                                       : result::PromptSource{request.prompts_file, std::nullopt, prompts.size()};
    OpenAiSettings settings{request.model, request.endpoint, request.stream, request.ignore_eos, spec.seed, request.extra_fields};
    if (!request.tokenizer.empty()) {
      enter("opening the tokenizer");
      tokenizer = harness::ModelTokenizer::open(BackendRegistry(default_plugin_dir()), request.tokenizer, "--tokenizer");
      settings.tokenizer = tokenizer.get();
    }
    auto made = std::make_unique<OpenAiSystem>(*http, settings, std::move(prompts), lanes, errors);
    openai = made.get();
    system = std::move(made);
  }
  environment.libraries["remote server"] = result.backend.framework + " " + result.backend.version;
  result.scenario.parameters.lanes = lanes;
  result.remote = remote;  // kept if the run fails
  PreparedRemote prepared;
  prepared.http = std::move(http);
  prepared.tokenizer = std::move(tokenizer);
  prepared.system = std::move(system);
  prepared.openai = openai;
  prepared.remote = std::move(remote);
  prepared.lanes = lanes;
  return prepared;
}

// Counters of several ranks' clients as one: numbers add, lists join (up to a few), the rest is
// the first rank's.
json summed_counts(const json& into, const json& other) {
  if (into.is_number_integer() && other.is_number_integer()) return into.get<std::int64_t>() + other.get<std::int64_t>();
  if (into.is_number() && other.is_number()) return into.get<double>() + other.get<double>();
  if (into.is_array() && other.is_array()) {
    auto joined = into;
    for (const auto& item : other)
      if (joined.size() < 5) joined.push_back(item);
    return joined;
  }
  if (!into.is_object() || !other.is_object()) return into.is_null() ? other : into;
  auto sum = into;
  for (const auto& [key, value] : other.items()) sum[key] = sum.contains(key) ? summed_counts(sum[key], value) : value;
  return sum;
}

// This rank's client counters, which rank 0 adds up over the ranks.
json client_counts(const PreparedRemote& prepared, const RemoteErrors& errors) {
  json counts{{"errors", errors.to_json()}};
  if (prepared.http) counts["connections_opened"] = prepared.http->connections_opened();
  if (prepared.openai) counts["token_counts"] = result::to_json(prepared.openai->token_counts());
  return counts;
}

// What rank 0 keeps of a distributed run: every rank's part, merged.
struct MergedRanks {
  std::optional<loadgen::ScenarioOutcome> outcome;  // none when no rank ran
  loadgen::ScaleoutSummary summary;
  json client = json::object();
};

// Every rank sends its part (its outcome, or why it has none) to rank 0, which merges the outcomes
// of the ranks that ran. Every rank calls it exactly once per run, whatever happened before.
std::optional<MergedRanks> gather_ranks(const loadgen::RankCoordination& ranks, loadgen::RankOutcome mine,
                                        const loadgen::ScenarioSpec& total) {
  const auto texts = ranks.gather(to_json(mine).dump());
  if (ranks.rank != 0) return std::nullopt;
  std::vector<loadgen::RankOutcome> parts;
  std::vector<loadgen::ScenarioOutcome> outcomes;
  MergedRanks merged;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    auto part = loadgen::rank_outcome_from_json(json::parse(texts[r]));
    merged.client = r == 0 ? part.client : summed_counts(merged.client, part.client);
    if (part.outcome && part.error.empty()) outcomes.push_back(*part.outcome);
    parts.push_back(std::move(part));
  }
  merged.summary = loadgen::summarize_ranks(parts, total);
  if (!outcomes.empty()) merged.outcome = loadgen::merge_rank_outcomes(outcomes, total);
  return merged;
}

}  // namespace

namespace {

constexpr NamedValue<RemoteProtocol> kProtocols[] = {{RemoteProtocol::kKServe, "kserve"},
                                                     {RemoteProtocol::kKServeGrpc, "kserve-grpc"},
                                                     {RemoteProtocol::kOpenAi, "openai"},
                                                     {RemoteProtocol::kHttp, "http"}};

}  // namespace

std::vector<std::pair<std::string, RemoteProtocol>> protocol_names() { return names_in(kProtocols); }

std::string_view name_of(RemoteProtocol protocol) { return name_in(kProtocols, protocol); }

RemoteRequest request_for_cell(const result::CellRequest& cell) {
  const auto& remote = cell.remote;
  if (!remote.is_object() || !remote.contains("url") || !remote["url"].is_string()) throw Error("cell: 'remote' needs a url");
  RemoteRequest request;
  request.url = remote["url"].get<std::string>();
  request.model = remote.value("model", std::string());
  request.protocol = parse_in(kProtocols, remote.value("protocol", std::string("kserve")), "cell: remote: protocol");
  request.cell = cell;
  if (request.cell.scenario.concurrency == 0 && loadgen::is_open_loop(request.cell.scenario))
    request.cell.scenario.concurrency = kDefaultOpenLoopInFlight;
  return request;
}

result::RunResult measure_remote(const RemoteRequest& request, const std::atomic<bool>* stop,
                                 const harness::StageCallback& on_stage, const loadgen::RankCoordination* ranks) {
  const bool distributed = ranks != nullptr;  // launched as ranks (even one): each runs a share, rank 0 merges
  return harness::measure_in_stages(
      request.cell, on_stage, [&](result::RunResult& result, probes::Environment& environment, const auto& enter) {
        result.origin = result::ResultOrigin::kRemote;  // before connecting, so a failed connection is remote too
        enter("connecting");
        const auto& total = request.cell.scenario;
        loadgen::validate(total);
        // One rank runs the whole scenario; several run their shares of it.
        const auto spec = distributed ? loadgen::share_for_rank(total, ranks->rank, ranks->ranks) : total;
        RemoteErrors errors;
        PreparedRemote prepared;
        std::string failure;  // a distributed rank's own failure, reported at the gather
        try {
          prepared = prepare_remote(request, spec, result, environment, enter, errors);
        } catch (const std::exception& e) {
          if (!distributed) throw;
          failure = e.what();
        }
        const bool root = !distributed || ranks->rank == 0;

        std::unique_ptr<MetricsScraper> scraper;
        if (!request.scrape_url.empty() && root && prepared.system) {
          scraper = std::make_unique<MetricsScraper>(request.scrape_url, request.scrape_interval_s);
          scraper->start();
        }

        enter("running");
        // CPU and memory of this process: the client's own cost, not the server's. The cell ran on
        // the remote server, so its energy is unavailable: this machine's RAPL would count the
        // client's joules against the server's inferences.
        probes::ResourceSampler sampler(0.1, probes::energy_target_for_device("remote server"));
        sampler.start();
        const auto sampler_start_ns = mono_now_ns();
        const auto mark = [&] {
          if (scraper) scraper->mark();
        };
        std::optional<loadgen::ScenarioOutcome> outcome;
        if (!distributed) {
          outcome = loadgen::run_scenario(*prepared.system, spec, environment.logical_cores, stop, mark);
        } else if (!ranks->all(failure.empty())) {
          if (failure.empty()) failure = "not run: another rank could not prepare its requests";
        } else {
          try {
            outcome = loadgen::run_scenario(*prepared.system, spec, environment.logical_cores, stop, mark, ranks);
          } catch (const std::exception& e) {
            failure = e.what();
          }
        }
        const auto resources = sampler.stop();
        auto remote = prepared.remote;
        auto client = client_counts(prepared, errors);
        if (distributed) {
          enter("merging the ranks' results");
          // Its share as one rate or client count (ramps and pulses change theirs per phase: 0).
          const bool server = loadgen::holds_one_rate(spec.name);
          loadgen::RankOutcome mine{
              ranks->rank, ranks->host, server ? spec.qps : 0.0, loadgen::is_open_loop(spec) ? 0 : spec.concurrency, outcome,
              failure,     client};
          if (outcome && spec.name == loadgen::Scenario::kSoak) mine.share_qps = outcome->parameters.value("soak_qps", 0.0);
          auto merged = gather_ranks(*ranks, std::move(mine), total);
          if (!root) {
            if (!failure.empty()) throw Error(failure);
            return;  // rank 0 records the run
          }
          result.scaleout = result::scaleout_record_from(merged->summary.section);
          if (!merged->outcome) throw Error("no rank ran: " + merged->summary.problems);
          outcome = std::move(merged->outcome);
          client = merged->client;
        }
        const auto headline = result::record_outcome(result, request.cell, *outcome, resources, sampler_start_ns);
        if (scraper) {
          remote.scrape = scraper->finish(outcome->measured_from_ns, result.model.name);
          (*remote.scrape)["url"] = scraper->url();
        }
        remote.errors = result::remote_errors_from(client["errors"], "remote errors");
        if (client.contains("connections_opened")) remote.connections_opened = client["connections_opened"].get<std::uint64_t>();
        if (prepared.openai) {
          const double wall_s = headline ? headline->duration_s : 0.0;
          auto metrics = loadgen::summarize_requests(
              headline ? headline->recorder.requests() : std::vector<loadgen::RequestRecord>{}, wall_s);
          loadgen::label_groups(metrics, prepared.system->samples());
          auto generation = harness::generation_result(metrics, total, outcome->parameters.value("lanes", prepared.lanes));
          // Prompts here are words or a file's text: their token lengths are what the server counted.
          generation.prompt_tokens =
              measured_prompt_tokens(headline ? headline->recorder.requests() : std::vector<loadgen::RequestRecord>{});
          generation.ttft_from = loadgen::is_open_loop(spec) ? "scheduled arrival (client queueing included)" : "issue";
          harness::add_request_figures(generation, headline);
          result.generation = generation;
          remote.token_counts = result::token_counts_from(client["token_counts"], "the client's token counts");
        }
        result.remote = remote;
        const auto error_total = remote.errors->total;
        // Nothing answered: the figures above describe no request, so the cell failed (the errors say why).
        if ((!headline || headline->recorder.completed() == 0) && error_total > 0) {
          const auto& examples = remote.errors->examples;
          throw Error("every request failed (" + std::to_string(error_total) + " errors" +
                      (examples.empty() ? std::string(")") : "; e.g. " + examples.front() + ")"));
        }
        // A rank that failed or fell behind makes the merged figures describe less load than asked.
        if (result.scaleout && !result.scaleout->valid) {
          result.status = result::CellStatus::kFailed;
          result.error = "remote: scale-out run invalid: " + result.scaleout->problems.value_or("");
        }
      });
}

}  // namespace infermark::remote

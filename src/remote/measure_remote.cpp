#include "remote/measure_remote.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "harness/input_set_library.hpp"
#include "harness/measure_generation.hpp"
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
report::TokenLengths measured_prompt_tokens(const std::vector<loadgen::RequestRecord>& requests) {
  report::TokenLengths lengths;
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

}  // namespace

std::vector<std::pair<std::string, RemoteProtocol>> protocol_names() {
  return {{"kserve", RemoteProtocol::kKServe}, {"kserve-grpc", RemoteProtocol::kKServeGrpc}, {"openai", RemoteProtocol::kOpenAi},
          {"http", RemoteProtocol::kHttp}};
}

std::string_view name_of(RemoteProtocol protocol) {
  switch (protocol) {
    case RemoteProtocol::kKServe:
      return "kserve";
    case RemoteProtocol::kKServeGrpc:
      return "kserve-grpc";
    case RemoteProtocol::kOpenAi:
      return "openai";
    case RemoteProtocol::kHttp:
      return "http";
  }
  return "kserve";
}

RemoteRequest request_for_cell(const harness::CellRequest& cell) {
  const auto& remote = cell.remote;
  if (!remote.is_object() || !remote.contains("url") || !remote["url"].is_string())
    throw Error("cell: 'remote' needs a url");
  RemoteRequest request;
  request.url = remote["url"].get<std::string>();
  request.model = remote.value("model", std::string());
  const auto protocol = remote.value("protocol", std::string("kserve"));
  bool known = false;
  for (const auto& [name, value] : protocol_names())
    if (name == protocol) {
      request.protocol = value;
      known = true;
    }
  if (!known) throw Error("protocol '" + protocol + "': expected kserve, kserve-grpc, openai or http");
  request.cell = cell;
  if (request.cell.scenario.concurrency == 0 && loadgen::is_open_loop(request.cell.scenario))
    request.cell.scenario.concurrency = kDefaultOpenLoopInFlight;
  return request;
}

report::RunResult measure_remote(const RemoteRequest& request, const std::atomic<bool>* stop,
                                 const harness::StageCallback& on_stage) {
  return harness::measure_in_stages(
      request.cell, on_stage, [&](report::RunResult& result, probes::Environment& environment, const auto& enter) {
        enter("connecting");
        const auto& spec = request.cell.scenario;
        loadgen::validate(spec);
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
        RemoteErrors errors;
        result.backend.name = "remote";
        result.model.name = request.model;
        result.model.path = address;
        result.model.format = std::string(name_of(request.protocol));
        json remote{{"protocol", name_of(request.protocol)},
                    {"url", address},
                    {"client", {{"io_threads", grpc ? 0 : request.io_threads}, {"timeout_s", request.timeout_s},
                                {"max_in_flight", lanes}}}};

        enter("reading the server's metadata");
        std::unique_ptr<loadgen::SystemUnderTest> system;
        OpenAiSystem* openai = nullptr;
        if (request.protocol == RemoteProtocol::kHttp) {
          result.backend.framework = "HTTP endpoint";
          if (result.model.name.empty()) result.model.name = http->endpoint().prefix.empty() ? "/" : http->endpoint().prefix;
          remote["request"] = {{"method", std::string(boost::beast::http::to_string(verb_of(request.plain.method)))},
                               {"body_bytes", request.plain.body.size()}};
          system = std::make_unique<PreparedHttpSystem>(
              *http, std::vector<net::PreparedRequestPtr>{prepare_plain_request(*http, request.plain)},
              std::make_unique<loadgen::SingleSample>(), lanes, errors);
        } else if (request.protocol != RemoteProtocol::kOpenAi) {
          std::unique_ptr<KServeGrpcSystem> over_grpc;
          if (grpc) over_grpc = std::make_unique<KServeGrpcSystem>(address, request.timeout_s, errors);
          const auto model = grpc ? over_grpc->read_model(request.model, request.version)
                                  : read_kserve_model(*http, request.model, request.version);
          result.backend.framework = model.server_name.empty() ? "KServe v2 server" : model.server_name;
          result.backend.version = model.server_version;
          result.model.name = model.name;
          result.model.inputs = model.inputs;
          result.model.outputs = model.outputs;
          remote["server"] = {{"name", model.server_name}, {"version", model.server_version}, {"platform", model.platform}};
          remote["model_version"] = model.version;
          const auto tensors = choose_tensor_encoding(request.tensors, model);
          remote["tensors"] = grpc ? "raw_input_contents" : tensors.why;
          if (!grpc) remote["server"]["extensions"] = model.extensions;
          enter("preparing requests");
          auto sets = generate_input_sets(model.inputs, request.cell.inputs);
          if (grpc) {
            over_grpc->prepare(model, sets, lanes);
            system = std::move(over_grpc);
          } else {
            auto requests = prepare_kserve_requests(*http, model, sets, tensors.binary);
            system = std::make_unique<PreparedHttpSystem>(*http, std::move(requests),
                                                          std::make_unique<harness::InputSetLibrary>(sets), lanes, errors);
          }
        } else {
          if (request.model.empty()) throw Error("--model: an OpenAI server needs the model name requests carry");
          const auto identity = openai_identity(*http);
          result.backend.framework = identity["server"].get<std::string>().empty() ? "OpenAI-compatible server"
                                                                                   : identity["server"].get<std::string>();
          remote["server"] = identity;
          remote["endpoint"] = name_of(request.endpoint);
          remote["stream"] = request.stream;
          remote["ignore_eos"] = request.ignore_eos;
          enter("preparing prompts");
          const loadgen::LengthDistribution prompt_words{spec.prompt_tokens, spec.prompt_tokens_stddev};
          const loadgen::LengthDistribution output_tokens{spec.output_tokens, spec.output_tokens_stddev};
          auto prompts = request.prompts_file.empty() ? synthetic_prompts(prompt_words, output_tokens, spec.seed)
                                                      : prompts_from_jsonl(request.prompts_file, output_tokens, spec.seed);
          remote["prompts"] = request.prompts_file.empty()
                                  ? json{{"source", "synthetic: common English words"}, {"words", prompt_words.describe()}}
                                  : json{{"source", request.prompts_file}, {"count", prompts.size()}};
          OpenAiSettings settings{request.model, request.endpoint, request.stream, request.ignore_eos, spec.seed,
                                  request.extra_fields};
          auto made = std::make_unique<OpenAiSystem>(*http, settings, std::move(prompts), lanes, errors);
          openai = made.get();
          system = std::move(made);
        }
        environment.libraries["remote server"] = result.backend.framework + " " + result.backend.version;
        result.scenario.parameters["lanes"] = lanes;
        result.remote = remote;  // kept if the run fails

        std::unique_ptr<MetricsScraper> scraper;
        if (!request.scrape_url.empty()) {
          scraper = std::make_unique<MetricsScraper>(request.scrape_url, request.scrape_interval_s);
          scraper->start();
        }

        enter("running");
        probes::ResourceSampler sampler;  // this process: the client's own cost, not the server's
        sampler.start();
        const auto sampler_start_ns = mono_now_ns();
        const auto outcome = loadgen::run_scenario(*system, spec, environment.logical_cores, stop, [&] {
          if (scraper) scraper->mark();
        });
        const auto resources = sampler.stop();
        const auto headline = harness::record_outcome(result, request.cell, outcome, resources, sampler_start_ns);
        if (scraper) {
          remote["scrape"] = scraper->finish(outcome.measured_from_ns, result.model.name);
          remote["scrape"]["url"] = scraper->url();
        }
        remote["errors"] = errors.to_json();
        if (http) remote["connections_opened"] = http->connections_opened();
        if (openai) {
          const double wall_s = headline ? headline->duration_s : 0.0;
          const auto metrics = loadgen::summarize_requests(
              headline ? headline->recorder.requests() : std::vector<loadgen::RequestRecord>{}, wall_s);
          auto generation = harness::generation_result(metrics, spec, lanes);
          // Prompts here are words or a file's text: their token lengths are what the server counted.
          generation.prompt_tokens = measured_prompt_tokens(headline ? headline->recorder.requests()
                                                                     : std::vector<loadgen::RequestRecord>{});
          generation.ttft_from = loadgen::is_open_loop(spec) ? "scheduled arrival (client queueing included)" : "issue";
          generation.goodput_rps = wall_s > 0 ? static_cast<double>(headline->recorder.met_targets()) / wall_s : 0.0;
          result.generation = generation;
          remote["token_counts"] = {{"from_server_usage", openai->counted_by_usage()},
                                    {"from_counted_stream_pieces", openai->counted_by_pieces()}};
        }
        result.remote = remote;
        // Nothing answered: the figures above describe no request, so the cell failed (the errors say why).
        if ((!headline || headline->recorder.completed() == 0) && errors.total() > 0) {
          const auto& examples = remote["errors"]["examples"];
          throw Error("every request failed (" + std::to_string(errors.total()) + " errors" +
                      (examples.empty() ? std::string(")") : "; e.g. " + examples.front().get<std::string>() + ")"));
        }
      });
}

}  // namespace infermark::remote

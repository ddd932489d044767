// The optional sections of a RunResult that one kind of run adds: "pipeline" (`infermark pipeline`),
// "remote" (`infermark load`) and "scaleout" (a `load` run as several ranks); the serving details of
// `infermark serve` are scenario.parameters' (result/scenario_record.hpp). Producers
// fill these structs and reports read their fields; the JSON keeps the keys and shape it had
// before they were typed (docs/result-schema.md), so older files still load.
//
// Reading is lenient about absence (a field an older file lacks reads as its default, an optional
// one as absent) and strict about type: a field of the wrong kind throws infermark::Error naming it
// ("<where>.requests.completed: expected an integer, got \"x\"").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/circuit_breaker.hpp"
#include "result/measured_phases.hpp"  // IssueLateness
#include "result/pipeline_mode.hpp"

namespace infermark::result {

// ---- "pipeline" -------------------------------------------------------------------------------

// The short summary pipelines write for a stage's or the whole pipeline's times (ms).
struct BriefLatency {
  std::uint64_t count = 0;
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

struct PipelineStageRecord {
  // The stage as it was opened (name, model, backend, settings, tensors, load time) or, for a stage
  // that never opened, as it was asked for: a named open map, its keys differ between the two.
  nlohmann::json description = nlohmann::json::object();
  std::uint64_t processed = 0;
  std::uint64_t dropped_here = 0;  // requests it found past their deadline
  std::optional<BriefLatency> service_ms, inference_ms, queue_wait_ms;
};

struct PipelineRequests {
  std::optional<std::uint64_t> timed;  // asked for in a closed loop; null in an open loop
  std::uint64_t admitted = 0, completed = 0, completed_on_time = 0, completed_late = 0, dropped = 0, rejected_by_breaker = 0;
};

struct BreakerEventRecord {
  double at_ms = 0;                            // from the first admission
  BreakerState state = BreakerState::kClosed;  // the state entered
};

// The per-request timeout's circuit breaker as the run left it (core/circuit_breaker.hpp).
struct BreakerRecord {
  int trip_after = 0;
  double cooldown_ms = 0;
  BreakerState final_state = BreakerState::kClosed;
  std::uint64_t times_opened = 0, rejected = 0;
  std::vector<BreakerEventRecord> events;
};

// The field guide's prediction of this mode from another mode's stage times.
struct PipelinePrediction {
  PipelineMode from_mode = PipelineMode::kSerial;
  double latency_ms = 0, queries_per_s = 0;
  std::string rule;  // "1 / slowest stage" or "1 / sum of stages"
};

// An OCR pipeline's recognised text against the labels of its input images: every completed
// request's lines decoded (greedy CTC) and compared with the lines its image shows.
struct TextCheckRecord {
  std::string labels;      // the labels file
  std::string characters;  // the recogniser's symbol list
  std::uint64_t requests = 0;
  std::uint64_t lines_expected = 0, lines_recognised = 0, lines_exact = 0;
  std::uint64_t characters_expected = 0, character_errors = 0;  // edit distance, in Unicode code points
  double line_accuracy = 0;                                     // lines_exact / lines_expected
  double character_accuracy = 0;                                // 1 - character_errors / characters_expected (floored at 0)
  // Each image's first request, in the input file's order: the lines it shows and the lines read.
  struct Sample {
    std::uint32_t sample = 0;
    std::vector<std::string> expected, recognised;
  };
  std::vector<Sample> samples;
  std::optional<std::string> error;  // the first request that could not be checked, and why
};

struct PipelineRecord {
  PipelineMode mode = PipelineMode::kSerial;
  std::vector<PipelineStageRecord> stages;
  std::string handoff;
  std::string transport;
  int queue_depth = 0;
  PipelineRequests requests;
  double timeout_ms = 0;
  std::optional<BriefLatency> in_pipeline_latency_ms;
  double in_pipeline_throughput_qps = 0, goodput_qps = 0;
  std::optional<BreakerRecord> breaker;  // null without a timeout
  PipelinePrediction prediction;
  std::optional<double> max_abs_diff_vs_serial;  // outputs against the serial mode's; null for serial itself
  std::optional<TextCheckRecord> text_check;     // a pipeline with text labels only
};

// ---- "remote" ---------------------------------------------------------------------------------

struct RemoteClient {
  int io_threads = 0;  // 0 over gRPC (its own channel)
  double timeout_s = 0;
  int max_in_flight = 0;
};

// Failed requests by kind; the maps count each transport error, HTTP status or gRPC status seen.
struct RemoteErrorCounts {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> transport, http_status, grpc_status;
  std::uint64_t in_stream = 0;
  std::vector<std::string> examples;  // the first few messages
};

struct PlainHttpRequest {  // protocol http: the one request sent
  std::string method;
  std::uint64_t body_bytes = 0;
};

struct PromptSource {  // protocol openai: where the prompts came from
  std::string source;
  std::optional<std::string> words;    // synthetic: the length distribution
  std::optional<std::uint64_t> count;  // a prompts file: how many it held
};

struct TokenCounts {  // protocol openai: how output tokens were counted
  std::uint64_t from_server_usage = 0, from_counted_stream_pieces = 0;
  // --tokenizer: requests whose output text the served model's own tokenizer counted (what the
  // figures use), that tokenizer, and beside it on the requests where the server also sent usage,
  // both totals (a re-tokenised text may split differently from the tokens generated).
  std::uint64_t from_tokenizer = 0;
  std::string tokenizer{};
  std::uint64_t tokenizer_tokens = 0, server_usage_tokens = 0;
};

struct RemoteRecord {
  std::string protocol;  // kserve, kserve-grpc, openai, http
  std::string url;
  RemoteClient client;
  // The server's identity as it reported it (name, version, platform, extensions; OpenAI: what
  // /v1/models and the headers said): a named open map, servers differ in what they tell.
  std::optional<nlohmann::json> server;
  std::optional<std::string> model_version;  // KServe
  std::optional<std::string> tensors;        // KServe: how tensors were encoded and why
  std::optional<PlainHttpRequest> request;   // http
  std::optional<std::string> endpoint;       // openai
  std::optional<bool> stream, ignore_eos;    // openai
  std::optional<PromptSource> prompts;       // openai
  std::optional<TokenCounts> token_counts;   // openai, after the run
  std::optional<RemoteErrorCounts> errors;   // after the run
  std::optional<std::uint64_t> connections_opened;
  // What --scrape read from the server's metrics endpoint: a named open map of the server's own
  // metric names.
  std::optional<nlohmann::json> scrape;
};

// ---- "scaleout" -------------------------------------------------------------------------------

// One rank of a distributed `load`: its share, what it did, and whether it kept up.
struct RankRecord {
  int rank = 0;
  std::string host;
  std::optional<double> share_qps;               // open loop
  std::optional<int> share_clients;              // closed loop
  std::optional<double> target_qps;              // server scenario
  std::optional<std::uint64_t> waited_for_lane;  // server scenario
  std::uint64_t completed = 0, errors = 0, rejected = 0;
  double achieved_qps = 0;
  std::optional<IssueLateness> issue_lateness_us;
  bool failed = false, fell_behind = false;
  std::optional<std::string> error;
  std::vector<std::string> behind_because;
  std::optional<nlohmann::json> seed;  // the rank's sampling seed, as its outcome recorded it
};

struct ScaleoutRecord {
  std::uint64_t ranks = 0;
  bool valid = true;
  std::string fell_behind_rule;
  std::string merge;
  std::vector<RankRecord> per_rank;
  std::optional<std::string> problems;  // when not valid: each failed or slow rank and why
};

// ---- JSON -------------------------------------------------------------------------------------

nlohmann::json to_json(const PipelineRecord& pipeline);
nlohmann::json to_json(const RemoteRecord& remote);
nlohmann::json to_json(const ScaleoutRecord& scaleout);
nlohmann::json to_json(const BreakerRecord& breaker);
// `where` prefixes the field in an error ("results/a.json: pipeline").
PipelineRecord pipeline_record_from(const nlohmann::json& j, const std::string& where = "pipeline");
RemoteRecord remote_record_from(const nlohmann::json& j, const std::string& where = "remote");
ScaleoutRecord scaleout_record_from(const nlohmann::json& j, const std::string& where = "scaleout");
BreakerRecord breaker_record_from(const nlohmann::json& j, const std::string& where = "breaker");
// The breaker as it is now: settings, counts and state changes (times in ms from `origin_ns`).
BreakerRecord breaker_record_of(const CircuitBreaker& breaker, std::int64_t origin_ns);
RemoteErrorCounts remote_errors_from(const nlohmann::json& j, const std::string& where = "errors");
// remote.token_counts, also how each rank's client reports its counts to rank 0.
nlohmann::json to_json(const TokenCounts& counts);
TokenCounts token_counts_from(const nlohmann::json& j, const std::string& where = "token_counts");
nlohmann::json to_json(const RemoteErrorCounts& errors);

}  // namespace infermark::result

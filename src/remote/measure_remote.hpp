// Measures a remote inference server under any scenario — a KServe v2 / Triton model or an
// OpenAI-compatible LLM endpoint — and returns an ordinary RunResult (backend "remote"), so
// report, compare and recommend treat it like an in-process cell. Failures become the result's
// status and error, never an exception; what was measured before is kept.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/measure_cell.hpp"
#include "loadgen/rank_share.hpp"
#include "net/http_client.hpp"
#include "remote/kserve_http.hpp"
#include "remote/openai_system.hpp"
#include "remote/prepared_http_system.hpp"

namespace infermark::remote {

enum class RemoteProtocol { kKServe, kKServeGrpc, kOpenAi, kHttp };
std::string_view name_of(RemoteProtocol protocol);  // "kserve", "kserve-grpc", "openai", "http"
std::vector<std::pair<std::string, RemoteProtocol>> protocol_names();

struct RemoteRequest {
  std::string url;
  RemoteProtocol protocol = RemoteProtocol::kKServe;
  std::string model;                               // required for openai; kserve: the model to load (its metadata gives inputs)
  std::string version;                             // kserve: "" for the server's default
  TensorEncoding tensors = TensorEncoding::kAuto;  // kserve over HTTP
  OpenAiEndpoint endpoint = OpenAiEndpoint::kChat;
  bool stream = true;
  bool ignore_eos = true;
  nlohmann::json extra_fields = nlohmann::json::object();  // openai: merged into every request body
  std::string prompts_file;                                // openai: JSONL prompts ("": synthetic)
  std::string tokenizer;                 // openai: the served model's file, whose tokenizer counts output tokens
  PlainHttpRequest plain;                // http: the one request every query sends
  std::vector<net::HttpHeader> headers;  // sent with every request, never recorded
  std::string scrape_url;                // the server's Prometheus endpoint, sampled during the run ("": none)
  double scrape_interval_s = 1;
  double timeout_s = 60;
  int io_threads = 1;
  result::CellRequest cell;  // inputs (shapes, files, seed) and the scenario
};

// An open loop against a server needs room for the requests its queue holds: in flight is cheap
// here, so without --concurrency up to this many are.
constexpr int kDefaultOpenLoopInFlight = 256;

// A study's server cell (result::CellRequest::remote: url, protocol, model) as a request, with the
// cell's inputs and scenario; the client's other settings keep their defaults. Throws
// infermark::Error naming the field when the cell's remote part is incomplete or unknown.
RemoteRequest request_for_cell(const result::CellRequest& cell);

// With `ranks` (an MPI job of several ranks), every rank runs its share of the scenario
// (loadgen::share_for_rank) against the server and sends its outcome to rank 0, which merges them
// exactly and returns the one result, with a "scaleout" section; a rank that failed or fell behind
// makes it failed (invalid), with the figures kept. The other ranks return a result that only says
// whether their own part failed. Every rank takes part in every collective, whatever fails.
result::RunResult measure_remote(const RemoteRequest& request, const std::atomic<bool>* stop,
                                 const harness::StageCallback& on_stage = {}, const loadgen::RankCoordination* ranks = nullptr);

}  // namespace infermark::remote

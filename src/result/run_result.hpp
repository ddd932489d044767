// RunResult: the versioned JSON document written for every measured cell (one backend, one
// configuration). Everything downstream (tables, reports, comparisons) reads only these files.
// The schema is documented in docs/result-schema.md; bump kSchemaVersion on incompatible change.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/output_kind.hpp"
#include "loadgen/analysis.hpp"
#include "loadgen/generation_metrics.hpp"
#include "loadgen/service_targets.hpp"
#include "probes/resource_sampler.hpp"
#include "result/cell_status.hpp"
#include "result/measured_phases.hpp"
#include "result/perplexity_result.hpp"
#include "result/result_sections.hpp"
#include "result/scenario_record.hpp"
#include "stats/label_accuracy.hpp"
#include "stats/latency_summary.hpp"
#include "stats/output_agreement.hpp"

namespace infermark::result {

inline constexpr const char* kSchemaName = "infermark.run-result";
inline constexpr int kSchemaVersion = 2;  // 2: scenario.parameters typed (docs/result-schema.md)

struct ModelDescription {
  std::string path;
  std::string name;    // file stem
  std::string format;  // see model_format()
  long long size_bytes = 0;
  std::vector<TensorSpec> inputs;  // as the backend declared them (dynamic dims -1)
  std::vector<TensorSpec> outputs;
  std::map<std::string, OutputKind> output_kinds;  // from the zoo manifest, where it gives them
};

struct Throughput {
  double wall_s = 0.0;            // timed loop, first issue to last completion
  double queries_per_s = 0.0;     // completed queries / wall_s
  double inferences_per_s = 0.0;  // queries_per_s x batch
};

struct MemoryUse {
  double rss_before_load_mb = 0.0;
  double rss_after_load_mb = 0.0;
  double peak_rss_mb = 0.0;
  std::string peak_scope;          // what the peak covers, e.g. "worker process: load + warm-up + timed runs"
  std::optional<double> limit_mb;  // the worker's --memory-limit, when one was set
};

struct Timing {
  double load_ms = 0.0;             // Backend::open (parse, optimise, compile)
  double prepare_ms = 0.0;          // binding inputs (and compiling for concrete shapes)
  double first_inference_ms = 0.0;  // first warm-up query
};

// Outputs compared with a reference backend's on the same inputs (filled by the orchestrator).
// Agreement over the input sets of one shape (varying shapes): the worst of its sets.
struct ShapeAgreement {
  std::string shape;           // the sample group's label, "input=1x3x224x224"
  int sets = 0;                // input sets of this shape compared
  double max_abs_error = 0.0;  // worst over its sets and outputs
  double min_cosine_similarity = 1.0;
  std::optional<double> top1_agreement;  // first output's, over its sets
  bool comparable = true;
};

struct CrossCheck {
  std::string reference_backend;
  std::string reference_result;                 // file name of the reference cell's result
  bool is_reference = false;                    // this result is the reference itself
  std::vector<stats::OutputAgreement> outputs;  // the first input set's
  std::vector<ShapeAgreement> by_shape;         // every input set, per shape (varying shapes only)
};

// What the resource sampler saw over a cell's measurement, and the work it did.
struct ResourceRecord {
  probes::ResourceSummary summary;
  double inferences = 0;                       // completed queries x batch, every phase
  std::optional<double> inferences_per_joule;  // where energy was measured
};

// A token-length workload and what it processed: the requested distribution and the total.
struct TokenLengths {
  double mean = 0, stddev = 0;
  long long total = 0;
};

// A shared-prefix workload as asked, and its requests apart by whether their prefix had been
// issued before them (warm-up included): how many of each, and the TTFT of each kind.
struct SharedPrefixResult {
  int groups = 0, prefix_tokens = 0;  // as asked (tokens in `run`, words in `load`)
  loadgen::PrefixSplit split;
};

// The serving figures of an LLM cell (docs/result-schema.md, "generation"), from its headline phase.
struct GenerationResult {
  int concurrency = 0;  // lanes: sequence slots
  TokenLengths prompt_tokens, output_tokens;
  std::size_t requests = 0;
  int steps = 0;
  double wall_s = 0;
  std::optional<stats::LatencySummary> ttft_ms, tpot_ms, itl_ms, e2e_ms;
  double prefill_tokens_per_s = 0, decode_tokens_per_s = 0, output_tokens_per_s = 0, requests_per_s = 0;
  std::string ttft_from;                              // "issue" or "scheduled arrival (...)"; empty in older files
  std::optional<double> goodput_rps;                  // requests/s within every SLO; absent in older files
  std::optional<PerplexityResult> perplexity;         // --perplexity-text only
  std::optional<SharedPrefixResult> shared_prefix;    // --shared-prefix only
  std::optional<std::uint64_t> prompt_tokens_reused;  // prefill a prefix cache skipped since load, where the engine has one
  std::vector<loadgen::GroupGeneration> by_group;     // per latency group where there are several (a conversation's turns)
  std::string prompt_source;                          // in process: where prompt tokens came from; empty in older files
  // Every recorded request's TTFT, TPOT and end-to-end latency, in record order, so that goodput
  // and the P99s can be judged again under other limits (the HTML report's SLO inputs).
  std::vector<loadgen::RequestLatencies> request_latencies;
};

// Where a result's latencies were taken, so only like results are ranked together: the harness
// around the framework call, a server around each request it served, or a client over the network.
enum class ResultOrigin {
  kInProcess,  // `run`, `sweep`, `pipeline`: the harness timed the framework in its own process
  kServed,     // `infermark serve`: server side, request parsed to response ready
  kRemote,     // `infermark load`: client side, network and server included
};

std::string_view name_of(ResultOrigin origin);  // "in_process", "served", "remote"
// Throws infermark::Error naming `what` and the choices.
ResultOrigin parse_result_origin(const std::string& text, const std::string& what = "origin");
// "server-side latency of infermark serve, ...": what the origin's latencies time.
std::string_view origin_description(ResultOrigin origin);

struct RunResult {
  ResultOrigin origin = ResultOrigin::kInProcess;
  CellStatus status = CellStatus::kOk;
  std::string error;       // the cause when status is not ok
  std::string started_at;  // UTC, ISO 8601
  std::string isolation;   // "worker process" or "in-process"
  ModelDescription model;
  BackendInfo backend;
  SessionOptions requested;
  std::vector<EffectiveSetting> effective_settings;
  ScenarioDescription scenario;
  Timing timing;
  std::optional<stats::LatencySummary> latency_ms;
  std::string percentile_method;                             // "exact" (every sample kept) or "histogram" (<= 1% relative error)
  std::vector<double> samples_ms;                            // every sample when the method is exact, else empty
  std::optional<stats::LatencyHistogram> latency_histogram;  // mergeable log-linear histogram (ns) of the summarised phases
  std::optional<TimeSeries> time_series;                     // per-interval completions, errors, throughput, P50/P99
  std::vector<PhaseRecord> phases;                           // every measured phase (ramp steps, trials, ...)
  loadgen::Analysis analysis;                                // knee, SLA verdict, max QPS, soak and pulse verdicts
  std::optional<ResourceRecord> resources;                   // CPU, memory, energy and GPU over the measurement
  std::optional<GenerationResult> generation;                // LLM cells: TTFT, TPOT, inter-token latency, token rates
  Throughput throughput;
  MemoryUse memory;
  std::string outputs_dir;                             // .npy outputs of the last run, "" when not saved
  std::optional<CrossCheck> cross_check;               // null until compared, or when no reference ran
  std::optional<stats::LabelAccuracy> label_accuracy;  // inputs with labels beside them only (core/input_labels)
  std::optional<PipelineRecord> pipeline;              // stages, per-stage times, timeouts, breaker (pipeline runs only)
  std::optional<RemoteRecord> remote;                  // protocol, URL, server identity, errors by kind (`load` runs only)
  std::optional<ScaleoutRecord> scaleout;  // ranks of a distributed `load`: each one's share, counts, whether it fell behind
  nlohmann::json environment = nlohmann::json::object();
};

// The origin of a result written before the field existed: a `load` result (backend "remote" or a
// "remote" section) is remote, a `serve` result (no scenario: "serve") served, anything else in process.
ResultOrigin derived_origin(const RunResult& result);

nlohmann::json to_json(const RunResult& result);
nlohmann::json to_json(const GenerationResult& generation);
// Reads the "generation" object; fields added later default when absent.
GenerationResult generation_from(const nlohmann::json& json);
nlohmann::json to_json(const ResourceRecord& resources);
ResourceRecord resources_from(const nlohmann::json& json);
// A latency summary as results write it (count, moments, percentiles with their intervals), and back.
nlohmann::json latency_json(const stats::LatencySummary& summary);
stats::LatencySummary latency_from(const nlohmann::json& json);
// Throws infermark::Error naming `source` when the document is not a run result, has a newer
// schema version, or lacks a required field.
RunResult run_result_from_json(const nlohmann::json& json, const std::string& source);

// Reads and validates one result file; throws infermark::Error naming the file and the cause.
RunResult read_run_result(const std::string& path);
// Writes atomically (temp file + rename) so a crash never leaves a half-written result.
void write_run_result(const RunResult& result, const std::string& path);

}  // namespace infermark::result

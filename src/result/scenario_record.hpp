// What a result records about the load that drove it: which scenario (or traffic no scenario
// shaped), the scenario as asked and what running it resolved (lanes, session sharing, measured
// capacity, rates, the input sets drawn), and what a varying-shape run fed. Readers use the fields;
// the JSON keys live only in scenario_record.cpp (docs/result-schema.md, "scenario").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "loadgen/scenario.hpp"
#include "result/pipeline_mode.hpp"
#include "result/session_sharing.hpp"

namespace infermark::result {

// One distinct shape a varying-shape run fed: its queries, their latency and the work per query.
struct ShapeSetRecord {
  std::optional<std::string> group;                       // "input=1x3x224x224"; absent in files from before per-shape latency
  std::uint64_t queries = 0;                              // in the headline phase
  std::optional<double> p50_ms, p90_ms, p99_ms, mean_ms;  // where it ran queries
  double input_elements = 0;
};

// The "varying_shapes" section: inputs whose shapes vary per query (--shape-range).
struct VaryingShapesRecord {
  std::map<std::string, std::string> ranges;  // input name -> its range as given ("1x3x160-288x160-288")
  std::optional<bool> bucketed;               // every range rounds to buckets; absent in older files
  std::vector<ShapeSetRecord> sets;           // one per distinct shape
  std::optional<std::uint64_t> distinct_shapes, input_sets;
  double mean_input_elements = 0;       // per query, weighted by the queries each shape ran
  std::vector<std::string> set_groups;  // each input set's shape label, in set order (outputs saved only)
};

// The input sets queries drew from ("samples").
struct SampleDraw {
  std::uint64_t count = 1;   // input sets
  std::uint64_t groups = 1;  // distinct shapes among them
  std::string order;         // how a query picks its set
  std::uint64_t seed = 0;
};

// A segment of an open-loop schedule (pulse): how long, at what offered rate.
struct RateSegmentRecord {
  double duration_s = 0;
  double rate_qps = 0;
};

// Mirrored requests of one input shape: the variant's outputs against its shadow's.
struct ShadowShapeRecord {
  std::string shape;  // "1x3x224x224"
  std::uint64_t compared = 0, disagreed = 0;
  double max_abs_error = 0;
};

struct ShadowRecord {
  std::vector<ShadowShapeRecord> by_shape;
  std::uint64_t dropped = 0;  // mirrored requests the shadow refused or failed
};

// Served traffic (`infermark serve`): the variant, its share of the traffic and how it was served.
struct ServingRecord {
  std::string variant;
  double weight = 0;  // routing weight
  // Tensor models.
  std::optional<std::int64_t> instances, max_batch_size, max_queue_delay_us;
  std::optional<double> inline_below_us;
  std::optional<std::string> batching_note;  // why batching asked for was not applied; "" when it was
  // Language models (their batching is ScenarioParameters::batching).
  std::optional<std::int64_t> sequence_slots, context_per_sequence;
  std::uint64_t errors = 0;  // requests refused or failed
  std::uint64_t rows = 0;    // rows served by successful requests
  std::string latency_measured;
  std::map<std::string, ShadowRecord> shadow;  // by the shadow variant requests were mirrored to
};

// "scenario.parameters": the scenario as asked and what running it resolved. Served traffic has no
// request; keys this build does not type (a pipeline's load, a server's settings) stay in `extra`.
struct ScenarioParameters {
  std::optional<loadgen::ScenarioSpec> request;            // every field of the scenario as asked
  std::optional<int> lanes;                                // lanes the load ran on
  std::optional<std::string> session_sharing;              // how the lanes shared sessions, as the framework did it
  std::optional<SessionSharing> sessions;                  // as asked (--sessions)
  std::optional<std::string> batching;                     // LLM cells: how requests were batched
  std::optional<double> capacity_qps;                      // measured by the capacity probe (server search, soak, pulse)
  std::optional<double> soak_qps;                          // soak: the offered rate
  std::optional<std::vector<RateSegmentRecord>> schedule;  // pulse: baseline, burst, recovery
  std::optional<SampleDraw> samples;
  std::optional<loadgen::TraceSummary> trace;  // replay: the trace as replayed
  std::optional<VaryingShapesRecord> varying_shapes;
  std::optional<ServingRecord> serving;             // served traffic only (written as keys beside the others)
  nlohmann::json extra = nlohmann::json::object();  // untyped keys (a pipeline's load), kept as written
};

// "scenario": what drove the cell and with what inputs.
struct ScenarioDescription {
  // The load generator's scenario; none for served traffic (requests clients sent to `infermark
  // serve`, written as "serve"). A pipeline's is the load it ran.
  std::optional<loadgen::Scenario> name = loadgen::Scenario::kSingleStream;
  std::optional<PipelineMode> pipeline_mode;  // pipeline runs only: the name is written "pipeline-<mode>"
  long long batch = 1;
  int warmup_runs = 10;
  int timed_runs = 100;
  unsigned long long seed = 42;
  std::vector<Tensor> inputs;  // names, dtypes and concrete shapes fed (data is not written)
  ScenarioParameters parameters;
};

// The name a result writes: the scenario's, "serve" or "pipeline-<mode>".
std::string scenario_label(const ScenarioDescription& scenario);
// The load generator ran `scenario` itself (not inside a pipeline, not served traffic).
bool ran(const ScenarioDescription& description, loadgen::Scenario scenario);
bool is_served(const ScenarioDescription& scenario);
// The clients or lanes asked for (0: the scenario's default, or no request recorded).
int requested_concurrency(const ScenarioParameters& parameters);

nlohmann::json to_json(const VaryingShapesRecord& shapes);
VaryingShapesRecord varying_shapes_from(const nlohmann::json& json);
nlohmann::json to_json(const ScenarioParameters& parameters);
// Throws infermark::Error naming the field when a typed key holds a value it cannot take.
ScenarioParameters scenario_parameters_from(const nlohmann::json& json);
// Reads `resolved` (what a scenario run adds, as the load generator writes it) into `parameters`.
void merge_resolved(ScenarioParameters& parameters, const nlohmann::json& resolved);
// Every field of a scenario request; fields added later default when absent. Throws
// infermark::Error naming `where`.<field>.
loadgen::ScenarioSpec scenario_request_from(const nlohmann::json& json, const std::string& where);

// Sets `name` and `pipeline_mode` from a written name (after the parameters were read: a pipeline's
// scenario is its request's). Throws infermark::Error naming "scenario.name" for a name that is no
// scenario; "generation" (older LLM files) reads as concurrency.
void read_scenario_label(ScenarioDescription& scenario, const std::string& text);

}  // namespace infermark::result

// Runs a pipeline in one mode under a load-generator scenario and returns what each request did.
// serial and threads load every stage into this process; processes starts one `infermark
// pipeline-stage` worker per stage, so frameworks never share a process, and hands tensors over in
// shared-memory rings. Every mode is a PipelineSystem, so every scenario applies.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loadgen/scenario.hpp"
#include "pipeline/pipeline_system.hpp"
#include "probes/resource_sampler.hpp"
#include "result/cell_status.hpp"
#include "result/result_sections.hpp"

namespace infermark::pipeline {

struct ModeOutcome {
  PipelineMode mode = PipelineMode::kSerial;
  result::CellStatus status = result::CellStatus::kOk;  // ok, failed or interrupted
  std::string error;
  std::vector<StageDescription> stages;
  std::vector<RequestRecord> records;                 // admitted timed requests, in completion order
  std::optional<result::BreakerRecord> breaker;       // times from the first admission; none when the system never ran
  std::vector<Tensor> last_outputs;                   // the last stage's outputs of the last request completed
  std::uint32_t last_sample = 0;                      // the input sample that request carried
  std::optional<result::TextCheckRecord> text_check;  // recognised text against labels, where asked
  loadgen::ScenarioSpec scenario;                     // the load applied (warm-up: the pipeline's own, before it)
  std::optional<loadgen::ScenarioOutcome> load;       // what the load generator measured; none when it never ran
  probes::ResourceSummary resources;                  // this process while the scenario ran
  std::int64_t sampler_start_ns = 0;
};

struct RunSettings {
  std::filesystem::path executable;         // infermark itself, for the processes mode's stage workers
  std::filesystem::path work_dir;           // stage worker configurations and logs
  const std::atomic<bool>* stop = nullptr;  // the user asked to stop: no new requests
  int logical_cores = 1;                    // what scenarios size their default lanes from
  double worker_timeout_s = 1800;           // a stage worker running longer is killed
};

// The load as the command line asks for it; what each mode runs is derived by scenario_for_mode.
struct LoadRequest {
  loadgen::ScenarioSpec scenario;  // --scenario and its flags (warm-up and seed are the pipeline's)
  bool scenario_given = false;     // false: a closed loop of `requests` at the pipeline's depth
  bool runs_given = false;         // --runs: timed queries of a closed loop (else the file's `requests`)
  bool concurrency_given = false;  // --concurrency: lanes in every mode (else each mode's depth)
};

// Requests a mode holds when every stage is busy and every queue between stages is full: serial 1;
// threads and processes: stages + (stages - 1) x queue_depth. The default number of lanes.
int pipeline_depth(const PipelineSpec& spec, PipelineMode mode);

// The scenario `mode` runs: the default is a closed loop of `requests` queries at the mode's depth,
// which keeps every stage busy as the pipeline's own loop did. Throws infermark::Error naming the
// flag for an impossible combination.
loadgen::ScenarioSpec scenario_for_mode(const PipelineSpec& spec, const LoadRequest& load, PipelineMode mode);

// Loads the stages (serial, threads) or starts the stage workers (processes) and returns the
// pipeline as a system under test with `lanes` lanes. Throws infermark::Error when a stage cannot
// load or a handoff cannot work.
std::unique_ptr<PipelineSystem> open_pipeline(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode,
                                              int lanes, const RunSettings& settings);

// Warms the pipeline up (`spec.warmup` untimed requests, no breaker, no timeout), then runs the
// scenario over it. Never throws for a failure while measuring: it becomes the outcome's status and
// error, and what was measured before is kept.
ModeOutcome run_mode(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode, const LoadRequest& load,
                     const RunSettings& settings);

// The stage worker (`infermark pipeline-stage --config FILE`): loads one stage, then serves the
// requests of its input ring into its output ring until the end of the stream. Throws
// infermark::Error on failure; returns false when stopped before the end.
bool run_stage_worker(const BackendRegistry& registry, const std::filesystem::path& config, const std::atomic<bool>* stop);

}  // namespace infermark::pipeline

// Runs a pipeline in one mode and returns what each request did. serial and threads load every
// stage into this process; processes starts one `infermark pipeline-stage` worker per stage, so
// frameworks never share a process, and hands tensors over in shared-memory rings.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/request_flow.hpp"

namespace infermark::pipeline {

struct ModeOutcome {
  std::string mode;
  std::string status = "ok";  // ok | failed | interrupted
  std::string error;
  std::vector<StageDescription> stages;
  std::vector<RequestRecord> records;  // admitted timed requests, in completion order
  nlohmann::json breaker;              // CircuitBreaker::to_json, times from the first admission
  std::vector<Tensor> last_outputs;    // the last stage's outputs of the last request completed
};

struct RunSettings {
  std::filesystem::path executable;  // infermark itself, for the processes mode's stage workers
  std::filesystem::path work_dir;    // stage worker configurations and logs
  const std::atomic<bool>* stop = nullptr;  // the user asked to stop: no new requests
  double worker_timeout_s = 1800;    // a stage worker running longer is killed
};

// Never throws for a failure while measuring: it becomes the outcome's status and error.
ModeOutcome run_mode(const BackendRegistry& registry, const PipelineSpec& spec, const std::string& mode,
                     const RunSettings& settings);

// The stage worker (`infermark pipeline-stage --config FILE`): loads one stage, then serves the
// requests of its input ring into its output ring until the end of the stream. Throws
// infermark::Error on failure; returns false when stopped before the end.
bool run_stage_worker(const BackendRegistry& registry, const std::filesystem::path& config, const std::atomic<bool>* stop);

}  // namespace infermark::pipeline

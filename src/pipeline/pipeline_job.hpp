// One `infermark pipeline FILE` (or a pipeline study under `sweep`): every mode the file asks for,
// one result per mode and a summary comparing them with the field guides' predictions.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "backends/registry.hpp"
#include "pipeline/pipeline_file.hpp"
#include "pipeline/pipeline_run.hpp"

namespace infermark::pipeline {

struct PipelineJob {
  std::string file;             // the pipeline file
  PipelineOverrides overrides;  // what the command line changes of it
  LoadRequest load;
  std::filesystem::path out = "results";  // results go to pipeline_folder(out, spec)
};

// Prints each mode as it starts and the summary at the end; writes the results and summary.md.
// Returns 0, 1 when a mode failed, 130 when `stop` was set. Throws infermark::Error naming the file
// for a bad pipeline file or override.
int run_pipeline_job(const PipelineJob& job, const BackendRegistry& registry, const std::atomic<bool>& stop);

}  // namespace infermark::pipeline

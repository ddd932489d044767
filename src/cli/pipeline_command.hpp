// `infermark pipeline FILE` and its hidden stage worker: their flags, and the options they fill.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/run_options.hpp"
#include "pipeline/pipeline_file.hpp"
#include "pipeline/pipeline_run.hpp"

namespace infermark::cli {

struct PipelineOptions {
  std::string file;
  std::string out = "results";
  pipeline::PipelineOverrides overrides;  // --warmup included, when given
  harness::RunOptions scenario_flags;     // the scenario flags, shared with `run`
  bool scenario_given = false, runs_given = false;
};

void define_pipeline_flags(CLI::App& cmd, PipelineOptions& options);

// The load the scenario flags ask for; throws infermark::Error naming the flag.
pipeline::LoadRequest load_request(const PipelineOptions& options);

struct PipelineStageOptions {
  std::string config;  // the stage configuration (JSON written by `pipeline`)
};

void define_pipeline_stage_flags(CLI::App& cmd, PipelineStageOptions& options);

}  // namespace infermark::cli

// Pipeline files: a YAML study whose `pipeline:` section lists the stages (model, backend,
// threads) and how they hand tensors over; the top level names the modes to compare and the load.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/pipeline_spec.hpp"

namespace infermark::pipeline {

// Throws infermark::Error naming the file and the key (and line:column for YAML syntax errors).
PipelineSpec load_pipeline_file(const std::filesystem::path& file);

// The same from YAML text; `file` names the pipeline in errors and gives its default name.
PipelineSpec parse_pipeline(const std::string& yaml, const std::filesystem::path& file);

// Whether a YAML file is a pipeline study (has a top-level `pipeline:` section); false when it
// cannot be read or parsed (the study loader then reports why).
bool is_pipeline_file(const std::filesystem::path& file);

// Settings given on the command line in place of the file's; the defaults leave the file's alone.
struct PipelineOverrides {
  std::vector<PipelineMode> modes;  // empty: the file's
  int requests = 0;                 // 0: the file's
  int warmup = -1;                  // negative: the file's
  int queue_depth = 0;              // 0: the file's
  double timeout_ms = -1;           // negative: the file's (0 = no timeout)
  int breaker_after = -1;           // negative: the file's (0 = never)
};

// Applies the overrides, then validates the result; throws infermark::Error naming `source`.
void apply_overrides(const PipelineOverrides& overrides, PipelineSpec& spec, const std::string& source);

}  // namespace infermark::pipeline

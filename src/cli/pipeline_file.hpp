// Pipeline files: a YAML study whose `pipeline:` section lists the stages (model, backend,
// threads) and how they hand tensors over; the top level names the modes to compare and the load.
#pragma once

#include <filesystem>

#include "pipeline/pipeline_spec.hpp"

namespace infermark::cli {

// Throws infermark::Error naming the file and the key (and line:column for YAML syntax errors).
pipeline::PipelineSpec load_pipeline_file(const std::filesystem::path& file);

// Whether a YAML file is a pipeline study (has a top-level `pipeline:` section); false when it
// cannot be read or parsed (the study loader then reports why).
bool is_pipeline_file(const std::filesystem::path& file);

// `infermark pipeline FILE --out OUT` with the file's own settings (how `sweep` runs a pipeline
// study). Returns the exit code.
int run_pipeline_study(const std::string& file, const std::string& out);

}  // namespace infermark::cli

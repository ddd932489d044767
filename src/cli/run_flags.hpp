// The measurement flags of `infermark run` (also how a study cell's settings are read); what
// they fill and its translation into cell requests live in harness/run_options.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/run_options.hpp"
#include "study/study.hpp"

namespace infermark::cli {

// Adds the measurement and scenario flags with their validators to `cmd`.
void add_measurement_flags(CLI::App& cmd, harness::RunOptions& options);

// The input flags (--batch, --shape, --shape-range, --input, --int-high, --seed) and the scenario
// flags: what measuring a remote server (`load`) shares with `run`.
void add_input_flags(CLI::App& cmd, harness::RunOptions& options);

// Only the scenario flags (--scenario, --concurrency, --warmup, --runs, --qps, --duration, patterns,
// SLOs): what a command whose inputs come from elsewhere (`pipeline`) shares with `run`.
void add_scenario_flags(CLI::App& cmd, harness::RunOptions& options);

// The `run` options of a study cell: the study's base flags, then the cell's settings, parsed by
// the same flag definitions and checks as `infermark run`. Throws infermark::Error naming the
// cell and the line and column of the value that fails (the study file alone when only the
// combination of flags does).
harness::RunOptions cell_options(const study::Study& study, const study::StudyCell& cell);

// --memory-limit SIZE (512M, 2G, bytes): the resident memory each worker may use, in MiB.
CLI::Option* add_memory_limit_flag(CLI::App& cmd, double& limit_mb);

// Flag validator with a readable message ("--qps: -5 must be above 0").
const CLI::Validator& above_zero();
const CLI::Validator& not_negative();

}  // namespace infermark::cli

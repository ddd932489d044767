// The measurement flags of `infermark run` and their translation into cell requests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/measure_cell.hpp"

namespace infermark::cli {

struct RunOptions {
  std::string model;
  long long batch = 1;
  // Intra-op thread counts; one cell per backend and count. Empty: the machine's physical core
  // count, applied to every backend. 0: each framework's own default.
  std::vector<int> threads;
  int inter_op_threads = 0;
  std::string precision = "fp32";
  std::string device = "cpu";
  std::vector<std::string> shapes;       // name=AxBxC
  std::vector<std::string> shape_ranges; // name=1x3x160-288x160-288/32: shapes drawn per query
  int shape_sets = 32;                   // input sets drawn ahead for --shape-range
  std::vector<std::string> input_files;  // name=file.npy
  std::vector<std::string> backend_opts; // key=value, passed to every backend that runs
  unsigned long long seed = 42;
  long long int_high = 100;              // integer inputs drawn from [0, int_high)
  std::string pulse_times_text = "10,10,20";
  std::string sessions = "shared";       // "shared" (one session, N request slots) or "separate" (N sessions)
  std::vector<int> concurrency;          // one cell per level; empty: the scenario's default
  std::string prompt_tokens = "128";     // LLMs: MEAN or MEAN:STDDEV tokens per request
  std::string output_tokens = "32";
  loadgen::ScenarioSpec scenario;
};

// Adds the measurement and scenario flags with their validators to `cmd`.
void add_measurement_flags(CLI::App& cmd, RunOptions& options);
// Only the scenario flags (--scenario, --concurrency, --warmup, --runs, --qps, --duration, patterns,
// SLOs): what a command whose inputs come from elsewhere (`pipeline`) shares with `run`.
void add_scenario_flags(CLI::App& cmd, RunOptions& options);

// The scenario the flags describe at `concurrency` (0: the first level given, or the scenario's
// default); throws infermark::Error naming the flag for malformed values. Not validated as a whole:
// a caller may still fill in defaults (to_cell validates).
loadgen::ScenarioSpec scenario_of(const RunOptions& options, int concurrency = 0);

// The thread counts to measure (the default resolved).
std::vector<int> thread_counts(const RunOptions& options);

// The concurrency levels to measure, one cell each; {0} (the scenario's default) when not given.
std::vector<int> concurrency_levels(const RunOptions& options);

// Builds the cell for `backend` at `threads` and `concurrency` (0: the first level given, or the
// scenario's default); throws infermark::Error naming the flag for malformed or impossible values,
// before anything runs.
harness::CellRequest to_cell(const RunOptions& options, const std::string& backend, int threads, int concurrency = 0);

// Flag validator with a readable message ("--qps: -5 must be above 0").
const CLI::Validator& above_zero();
const CLI::Validator& not_negative();

// The physical core count used when --threads is not given.
int default_thread_count();

}  // namespace infermark::cli

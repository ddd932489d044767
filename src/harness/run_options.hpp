// What `infermark run` (and each study cell) asks to measure, and its translation into cell
// requests: one per backend, thread count and concurrency level. The flags that fill these
// options are defined in src/cli/run_flags.hpp.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "harness/measure_cell.hpp"

namespace infermark::harness {

struct RunOptions {
  std::string model;
  long long batch = 1;
  // Intra-op thread counts; one cell per backend and count. Empty: the machine's physical core
  // count, applied to every backend. 0: each framework's own default.
  std::vector<int> threads;
  int inter_op_threads = 0;
  std::string precision = "fp32";
  std::string device = "cpu";
  std::vector<std::string> shapes;        // name=AxBxC
  std::vector<std::string> shape_ranges;  // name=1x3x160-288x160-288/32: shapes drawn per query
  int shape_sets = 32;                    // input sets drawn ahead for --shape-range
  std::vector<std::string> input_files;   // name=file.npy
  std::vector<std::string> backend_opts;  // key=value, passed to every backend that runs
  unsigned long long seed = 42;
  long long int_high = 100;  // integer inputs drawn from [0, int_high)
  std::string pulse_times_text = "10,10,20";
  result::SessionSharing sessions = result::SessionSharing::kShared;  // one session, N request slots; or N sessions
  std::vector<int> concurrency;                                       // one cell per level; empty: the scenario's default
  std::string prompt_tokens = "128";                                  // LLMs: MEAN or MEAN:STDDEV tokens per request
  std::string output_tokens = "32";
  std::string shared_prefix;          // LLMs: GROUPS:TOKENS, prompts in groups sharing a prefix ("" none)
  std::string think_time = "0";       // conversations: MEAN[:STDDEV] seconds between a turn's answer and the next
  std::string trace_format = "auto";  // replay: auto (told from the file), mooncake, azure or burstgpt
  std::string perplexity_text;        // LLMs: a text file to measure perplexity on
  int perplexity_window = 256;
  loadgen::ScenarioSpec scenario;
};

// The thread counts to measure (the default resolved), duplicates dropped, in the order given.
std::vector<int> thread_counts(const RunOptions& options);

// The concurrency levels to measure, one cell each; {0} (the scenario's default) when not given.
std::vector<int> concurrency_levels(const RunOptions& options);

// Builds the cell for `backend` at `threads` and `concurrency` (0: the first level given, or the
// scenario's default); throws infermark::Error naming the flag for malformed or impossible values,
// before anything runs.
result::CellRequest to_cell(const RunOptions& options, const std::string& backend, int threads, int concurrency = 0);

// The scenario the flags describe at `concurrency` (0: the first level given, or the scenario's
// default); throws infermark::Error naming the flag for malformed values. Not validated as a whole:
// a caller may still fill in defaults (to_cell validates).
loadgen::ScenarioSpec scenario_of(const RunOptions& options, int concurrency = 0);

// The cells of one model: for each backend, each thread count, each concurrency level (in that
// nesting order, so the comparison table groups a backend's cells together).
std::vector<result::CellRequest> model_cells(const RunOptions& options, const std::vector<std::string>& backends);

// The physical core count used when --threads is not given.
int default_thread_count();

// Which backends measure `model`: those requested (-b), or, when none are, every available one
// that reads the model's format. A requested name that cannot run is set aside with the reason
// (unknown, not built, wrong format) and the others still run; duplicates count once.
struct BackendSelection {
  std::vector<std::string> chosen;
  std::vector<std::pair<std::string, std::string>> rejected;  // name, why
};
// Throws infermark::Error when none is requested and no available backend reads the model; when
// none of the requested ones can run, `chosen` is empty (the caller reports the rejections first).
BackendSelection select_backends(const std::vector<std::string>& requested, const std::string& model,
                                 const std::vector<std::string>& available);

// A worker's time limit when none is given: the scenario's planned duration plus 10 minutes
// for loading and warm-up.
double default_cell_timeout_s(const loadgen::ScenarioSpec& scenario);

// "1,2,framework-default": the thread counts as `run` announces them.
std::string thread_list_text(const std::vector<int>& threads);

// "KEY=VALUE" split at the first '='; throws infermark::Error naming `flag` when malformed.
std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& flag);

}  // namespace infermark::harness

// From what each mode's requests did to figures: end-to-end latency and throughput, per-stage
// service time and queue wait, timeouts and the breaker; the field guides' predictions (serial latency
// = sum of the stages, pipelined throughput = 1 / slowest stage); one RunResult per mode and a
// table comparing the modes; the files a pipeline run writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/pipeline_run.hpp"
#include "result/run_result.hpp"

namespace infermark::pipeline {

struct StageFigures {
  int processed = 0;                                   // requests this stage ran
  int dropped_here = 0;                                // requests it found past their deadline
  std::optional<stats::LatencySummary> service_ms;     // took the request -> outputs fetched
  std::optional<stats::LatencySummary> inference_ms;   // Session::run alone
  std::optional<stats::LatencySummary> queue_wait_ms;  // previous stage done -> this one took it
};

struct ModeFigures {
  PipelineMode mode = PipelineMode::kSerial;
  int admitted = 0, completed = 0, on_time = 0, late = 0, dropped = 0, rejected = 0;
  std::vector<double> latency_samples_ms;  // completed requests, end to end
  std::optional<stats::LatencySummary> latency_ms;
  double wall_s = 0, throughput_qps = 0, goodput_qps = 0;  // completed / on-time requests per second
  std::vector<StageFigures> stages;
  // The field guides' predictions from the stage service means (the serial mode's where it ran).
  PipelineMode predicted_from = PipelineMode::kSerial;
  double predicted_latency_ms = 0;               // sum of stage service times
  double predicted_qps = 0;                      // serial: 1 / sum; pipelined: 1 / max
  std::optional<double> max_abs_diff_vs_serial;  // last outputs against the serial mode's
};

ModeFigures figures_of(const ModeOutcome& outcome, std::size_t stage_count);
// Fills predictions and output agreement across modes.
void compare_modes(std::vector<ModeFigures>& figures, const std::vector<ModeOutcome>& outcomes);

result::RunResult to_run_result(const PipelineSpec& spec, const std::string& spec_file, const ModeOutcome& outcome,
                                const ModeFigures& figures, const nlohmann::json& environment);

// Markdown: one row per mode with throughput, P50/P99 and predictions; then per-stage times.
std::string summary_table(const PipelineSpec& spec, const std::vector<ModeFigures>& figures);

// Markdown: the load each mode ran and what the load generator measured (its headline phase):
// lanes, issued, completed, failed queries, achieved rate, P50/P99 from issue or scheduled arrival.
std::string load_table(const std::vector<ModeOutcome>& outcomes);
// One line per mode that ran with a timeout: how often the circuit breaker opened, what it
// rejected and when it changed state; "" without a timeout.
std::string breaker_lines(const ModeOutcome& outcome, const PipelineSpec& spec);

// summary.md: the pipeline's name and description, the load, the table comparing the modes and
// the breaker lines.
std::string pipeline_summary(const PipelineSpec& spec, const std::vector<ModeOutcome>& outcomes,
                             const std::vector<ModeFigures>& figures, const LoadRequest& load);

// <out>/pipeline-<name>: where a pipeline run writes its results and summary.md.
std::filesystem::path pipeline_folder(const std::filesystem::path& out, const PipelineSpec& spec);

// <folder>/<name>.<mode>.json
std::filesystem::path mode_result_path(const std::filesystem::path& folder, const PipelineSpec& spec, PipelineMode mode);

// Writes the mode's result to mode_result_path(), with the last request's outputs as .npy files
// under <folder>/outputs/<mode>/ (recorded in the result) when there are any.
void write_mode_result(const std::filesystem::path& folder, const PipelineSpec& spec, const std::string& spec_file,
                       const ModeOutcome& outcome, const ModeFigures& figures, const nlohmann::json& environment);

}  // namespace infermark::pipeline

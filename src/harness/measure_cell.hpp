// Measures one cell — one backend, one model, one configuration — in the calling process and
// returns its RunResult. Failures become the result's status and error, never an exception, so
// whatever was measured before the failure is kept.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/input_generator.hpp"
#include "harness/session_sharing.hpp"
#include "loadgen/scenario.hpp"
#include "probes/environment.hpp"
#include "probes/resource_sampler.hpp"
#include "report/run_result.hpp"

namespace infermark::harness {

struct CellRequest {
  std::string backend;
  std::filesystem::path model;
  SessionOptions options;
  InputRequest inputs;
  loadgen::ScenarioSpec scenario;
  std::string isolation = "in-process";
  std::filesystem::path outputs_dir;  // where to save the last run's outputs as .npy ("" = don't)
  // Lanes share one session (its weights) where the framework allows, or each gets its own
  // session ("separate": N copies, the instances study's other half).
  SessionSharing sessions = SessionSharing::kShared;
  // A remote server's cell (a study's `servers`): {url, protocol, model}, measured by the remote
  // layer instead of a backend (see remote::request_for_cell); null for in-process cells.
  nlohmann::json remote;
  // Language models: a text to measure perplexity on after the timed run ("" = none), in windows.
  std::filesystem::path perplexity_text;
  int perplexity_window = 256;
};

// Called at each stage ("loading", "binding inputs", "warm-up", ...) so that a crash can be
// attributed to the stage it happened in.
using StageCallback = std::function<void(const std::string& stage)>;

report::RunResult measure_cell(const BackendRegistry& registry, const CellRequest& request,
                               const std::atomic<bool>* stop = nullptr, const StageCallback& on_stage = {});

// Throws infermark::Error naming the file when it is missing, a folder, or of no known format.
void check_model_file(const std::filesystem::path& model);

// A result that describes `request` (model, backend, settings, scenario) before anything is
// measured: the start of every cell's result, measured or lost.
report::RunResult result_for_cell(const CellRequest& request);

// What every measuring path shares around its framework-specific body: the result skeleton, the
// environment recorded, the stage reported (the worker's heartbeat) and named in the error when the
// body throws. `enter` moves to the next stage.
using CellBody = std::function<void(report::RunResult& result, probes::Environment& environment,
                                    const std::function<void(std::string)>& enter)>;
report::RunResult measure_in_stages(const CellRequest& request, const StageCallback& on_stage, const CellBody& body);

// What a cell's headline numbers summarise: the headline phase's recorder and duration, or every
// phase's merged and summed.
struct HeadlineFigures {
  loadgen::QueryRecorder recorder;
  double duration_s = 0;
};

// Everything a scenario outcome gives a result: resolved parameters, phases, headline latency and
// throughput, resources (and the soak's verdicts), and the interrupted status. Returns the headline
// figures it summarised (none when no phase ran), for callers that add their own sections.
std::optional<HeadlineFigures> record_outcome(report::RunResult& result, const CellRequest& request,
                                              const loadgen::ScenarioOutcome& outcome, const probes::ResourceSummary& resources,
                                              std::int64_t sampler_start_ns);

// The measured phases' spans (mono_now_ns's clock): what a cell's inference count covers, and so
// the only spans its energy is counted over (not the warm-up, not a capacity probe).
std::vector<probes::TimeWindow> measured_windows(const loadgen::ScenarioOutcome& outcome);

// The device a session ran on, whose counter gives the cell's energy: the one asked for, or the CPU
// where the framework did not honour the request (a setting requested as that device, not applied).
probes::EnergyTarget energy_target_for(const SessionOptions& options, const std::vector<EffectiveSetting>& settings);

// A scenario run with the resource sampler on, reading the energy of `energy`'s device over the
// measured phases only (the end of the warm-up is marked exactly; other phase edges are
// interpolated between the sampler's reads, `period_s` apart).
struct SampledRun {
  loadgen::ScenarioOutcome outcome;
  probes::ResourceSummary resources;
  std::int64_t sampler_start_ns = 0;
};
SampledRun run_sampled(loadgen::SystemUnderTest& system, const loadgen::ScenarioSpec& spec, int logical_cores,
                       const std::atomic<bool>* stop, const probes::EnergyTarget& energy, double period_s = 0.1);

// The peak RSS after measuring, and what it covers (the worker or this process; since the model
// load when the kernel let the peak be reset, else since the process started).
void record_peak_memory(report::RunResult& result, const CellRequest& request, bool peak_was_reset);

// Latency (exact samples or the histogram), its histogram and time series, and throughput over
// `duration_s` from one recorder: what every result's headline numbers are made of.
void fill_latency_and_throughput(report::RunResult& result, const loadgen::QueryRecorder& recorder, double duration_s);

// Path, name, format and size of a model file (size 0 when it cannot be read).
report::ModelDescription describe_model(const std::filesystem::path& model);

// Where the outputs of input set `sample` are saved under a cell's outputs folder (varying shapes).
std::filesystem::path sample_outputs_dir(const std::filesystem::path& dir, std::uint32_t sample);

// The .npy file of output `name` in `dir` (names are made safe for file systems).
std::filesystem::path output_file(const std::filesystem::path& dir, const std::string& name);

// "2026-12-02T14:38:55Z"
std::string utc_timestamp();

}  // namespace infermark::harness

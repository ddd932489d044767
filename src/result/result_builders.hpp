// Builds RunResults: the skeleton a cell request describes, and what a scenario outcome, a
// recorder and the resource sampler add to it. Every system under test (in-process cells, served
// traffic, pipelines, remote servers) builds its result with these, so the sections mean the same
// wherever a result came from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "loadgen/query_recorder.hpp"
#include "loadgen/scenario.hpp"
#include "probes/resource_sampler.hpp"
#include "result/cell_request.hpp"
#include "result/run_result.hpp"

namespace infermark::result {

// Throws infermark::Error naming the file when it is missing, a folder, or of no known format.
void check_model_file(const std::filesystem::path& model);

// A result that describes `request` (model, backend, settings, scenario) before anything is
// measured: the start of every cell's result, measured or lost.
result::RunResult result_for_cell(const CellRequest& request);

// What a cell's headline numbers summarise: the headline phase's recorder and duration, or every
// phase's merged and summed.
struct HeadlineFigures {
  loadgen::QueryRecorder recorder;
  double duration_s = 0;
};

// Everything a scenario outcome gives a result: resolved parameters, phases, headline latency and
// throughput, resources (and the soak's verdicts), and the interrupted status. Returns the headline
// figures it summarised (none when no phase ran), for callers that add their own sections.
std::optional<HeadlineFigures> record_outcome(result::RunResult& result, const CellRequest& request,
                                              const loadgen::ScenarioOutcome& outcome, const probes::ResourceSummary& resources,
                                              std::int64_t sampler_start_ns);

// The peak RSS after measuring, and what it covers (the worker or this process; since the model
// load when the kernel let the peak be reset, else since the process started).
void record_peak_memory(result::RunResult& result, const CellRequest& request, bool peak_was_reset);

// Latency (exact samples or the histogram), its histogram and time series, and throughput over
// `duration_s` from one recorder: what every result's headline numbers are made of.
void fill_latency_and_throughput(result::RunResult& result, const loadgen::QueryRecorder& recorder, double duration_s);

// Path, name, format and size of a model file (size 0 when it cannot be read).
result::ModelDescription describe_model(const std::filesystem::path& model);

// Where the outputs of input set `sample` are saved under a cell's outputs folder (varying shapes).
std::filesystem::path sample_outputs_dir(const std::filesystem::path& dir, std::uint32_t sample);

// The .npy file of output `name` in `dir` (names are made safe for file systems).
std::filesystem::path output_file(const std::filesystem::path& dir, const std::string& name);

// "2026-12-02T14:38:55Z"
std::string utc_timestamp();

}  // namespace infermark::result

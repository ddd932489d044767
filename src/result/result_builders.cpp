#include "result/result_builders.hpp"

#include <fmt/format.h>

#include <cctype>
#include <ctime>

#include "backends/declared.hpp"
#include "core/error.hpp"
#include "core/model_name.hpp"
#include "core/output_kind.hpp"
#include "probes/memory.hpp"
#include "result/cell_json.hpp"

namespace infermark::result {
namespace {

// The phases the cell's headline numbers summarise: the headline phase, or all of them merged;
// none when no phase ran (stopped during warm-up).
std::optional<HeadlineFigures> headline_of(const loadgen::ScenarioOutcome& outcome) {
  if (outcome.phases.empty()) return std::nullopt;
  if (outcome.headline) {
    const auto& phase = outcome.phases[*outcome.headline];
    return HeadlineFigures{phase.recorder, phase.duration_s};
  }
  HeadlineFigures merged{outcome.phases.front().recorder, 0.0};
  for (std::size_t i = 1; i < outcome.phases.size(); ++i) merged.recorder.merge(outcome.phases[i].recorder);
  for (const auto& phase : outcome.phases) merged.duration_s += phase.duration_s;
  return merged;
}

void fill_measurements(result::RunResult& result, const loadgen::ScenarioOutcome& outcome, const HeadlineFigures& headline) {
  for (const auto& phase : outcome.phases)
    result.phases.push_back(phase_record_from(loadgen::phase_json(phase, outcome.group_labels), "phases"));
  result.analysis = outcome.analysis;
  fill_latency_and_throughput(result, headline.recorder, headline.duration_s);
}

void fill_resources(result::RunResult& result, const probes::ResourceSummary& summary, const loadgen::ScenarioOutcome& outcome,
                    std::int64_t sampler_start_ns, loadgen::Scenario scenario) {
  double inferences = 0;
  for (const auto& phase : outcome.phases)
    inferences += static_cast<double>(phase.recorder.completed()) * static_cast<double>(result.scenario.batch);
  result.resources = result::ResourceRecord{summary, inferences, probes::inferences_per_joule(summary.energy, inferences)};
  if (scenario != loadgen::Scenario::kSoak || outcome.phases.empty()) return;
  // RSS samples from the soak phase only (after warm-up and the capacity probe).
  const double soak_offset_s = static_cast<double>(outcome.measured_from_ns - sampler_start_ns) * 1e-9;
  std::vector<loadgen::TimedValue> rss;
  for (const auto& s : summary.samples)
    if (s.t_s >= soak_offset_s) rss.push_back({s.t_s - soak_offset_s, s.rss_mb});
  result.analysis.soak = loadgen::analyse_soak(outcome.phases.front(), rss);
}

}  // namespace

void fill_latency_and_throughput(result::RunResult& result, const loadgen::QueryRecorder& recorder, double duration_s) {
  const auto& histogram = recorder.latency();
  result.latency_histogram = histogram;
  result.time_series = time_series_from(recorder.series().to_json(), "time_series");
  if (histogram.count() == 0) return;
  if (recorder.samples_complete()) {
    result.percentile_method = "exact";
    result.samples_ms = recorder.samples_ms();
    result.latency_ms = stats::summarize(result.samples_ms);
  } else {
    result.percentile_method = "histogram";
    result.latency_ms = stats::summarize_ranked(
        histogram.count(), [&](std::size_t rank) { return static_cast<double>(histogram.value_at_rank(rank)) * 1e-6; },
        histogram.mean() * 1e-6, histogram.stddev() * 1e-6);
  }
  const double completed = static_cast<double>(recorder.completed());
  result.throughput.wall_s = duration_s;
  result.throughput.queries_per_s = duration_s > 0 ? completed / duration_s : 0.0;
  result.throughput.inferences_per_s = result.throughput.queries_per_s * static_cast<double>(result.scenario.batch);
}

void check_model_file(const std::filesystem::path& model) {
  if (!std::filesystem::exists(model)) throw Error(model.string() + ": no such file");
  const auto format = model_format(model);
  const bool folder_format = is_folder_format(format);  // *.genai, *.ov, *.paddle
  if (std::filesystem::is_directory(model) && !folder_format)
    throw Error(model.string() + ": is a folder, not a model file (model folders are named *.genai, *.ov or *.paddle)");
  if (folder_format && !std::filesystem::is_directory(model))
    throw Error(model.string() + ": a " + format + " model is a folder (build one with infermark zoo build)");
  if (model_format(model).empty())
    throw Error(model.string() + ": unknown model format (expected " + declared_backends().extensions_text() + ")");
}

result::RunResult result_for_cell(const CellRequest& request) {
  result::RunResult result;
  result.origin = result::ResultOrigin::kInProcess;  // measure_remote makes its results remote
  result.started_at = utc_timestamp();
  result.isolation = request.isolation;
  result.model = describe_model(request.model);
  result.requested = request.options;
  result.backend.name = request.backend;
  result.scenario.name = request.scenario.name;
  result.scenario.batch = request.inputs.batch;
  result.scenario.warmup_runs = static_cast<int>(request.scenario.warmup_queries);
  result.scenario.timed_runs = static_cast<int>(request.scenario.max_queries);
  result.scenario.seed = request.inputs.seed;
  result.scenario.parameters.request = request.scenario;
  return result;
}

namespace {

// A model file's size, or the sum of the files of a model folder (*.genai); 0 when unreadable.
long long model_bytes(const std::filesystem::path& model) {
  std::error_code ec;
  if (!std::filesystem::is_directory(model, ec)) {
    const auto size = std::filesystem::file_size(model, ec);
    return ec ? 0 : static_cast<long long>(size);
  }
  long long total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(model, ec))
    if (entry.is_regular_file(ec)) total += static_cast<long long>(entry.file_size(ec));
  return total;
}

}  // namespace

result::ModelDescription describe_model(const std::filesystem::path& model) {
  return {model.string(), model_name(model), model_format(model), model_bytes(model), {}, {}, read_output_kinds(model)};
}

std::filesystem::path sample_outputs_dir(const std::filesystem::path& dir, std::uint32_t sample) {
  return dir / fmt::format("set-{:04}", sample);
}

std::filesystem::path output_file(const std::filesystem::path& dir, const std::string& name) {
  std::string safe = name;
  for (auto& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return dir / (safe + ".npy");
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

void record_peak_memory(result::RunResult& result, const CellRequest& request, bool peak_was_reset) {
  result.memory.peak_rss_mb = probes::read_process_memory().peak_rss_mb;
  result.memory.peak_scope =
      (request.isolation == "worker process" ? "worker process" : "this process") +
      std::string(peak_was_reset ? ": model load, warm-up and measurement" : ": since process start (peak reset refused)");
}

std::optional<HeadlineFigures> record_outcome(result::RunResult& result, const CellRequest& request,
                                              const loadgen::ScenarioOutcome& outcome, const probes::ResourceSummary& resources,
                                              std::int64_t sampler_start_ns) {
  merge_resolved(result.scenario.parameters, outcome.parameters);
  auto headline = headline_of(outcome);
  if (headline) fill_measurements(result, outcome, *headline);
  fill_resources(result, resources, outcome, sampler_start_ns, request.scenario.name);
  if (outcome.interrupted) {
    result.status = result::CellStatus::kInterrupted;
    result.error = request.backend + ": stopped by the user; the measurements made until then are kept";
  }
  return headline;
}

}  // namespace infermark::result

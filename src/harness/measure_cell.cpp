#include "harness/measure_cell.hpp"

#include <ctime>
#include <exception>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "probes/environment.hpp"
#include "probes/memory.hpp"

namespace infermark::harness {
namespace {

double ms_since(std::int64_t start_ns) { return static_cast<double>(mono_now_ns() - start_ns) * 1e-6; }

report::ModelDescription describe_model(const std::filesystem::path& model) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(model, ec);
  return {model.string(), model.stem().string(), model_format(model), ec ? 0 : static_cast<long long>(size), {}, {}};
}

void fill_throughput(report::RunResult& result, const loadgen::SingleStreamLog& log) {
  result.samples_ms = log.latencies_ms;
  if (log.latencies_ms.empty()) return;
  result.latency_ms = stats::summarize(log.latencies_ms);
  result.throughput.wall_s = log.wall_s;
  result.throughput.queries_per_s = log.wall_s > 0 ? static_cast<double>(log.latencies_ms.size()) / log.wall_s : 0.0;
  result.throughput.inferences_per_s = result.throughput.queries_per_s * static_cast<double>(result.scenario.batch);
}

// Validates before anything is loaded: an impossible request fails fast, naming the flag.
void check_request(const CellRequest& request) {
  if (!std::filesystem::exists(request.model)) throw Error(request.model.string() + ": no such file");
  if (std::filesystem::is_directory(request.model)) throw Error(request.model.string() + ": is a folder, not a model file");
  if (model_format(request.model).empty())
    throw Error(request.model.string() + ": unknown model format (expected .onnx, .xml, .pt, .tflite or .gguf)");
}

void save_outputs(Session& session, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& tensor : session.outputs()) write_npy(tensor, output_file(dir, tensor.name));
}

}  // namespace

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

report::RunResult measure_cell(const BackendRegistry& registry, const CellRequest& request,
                               const std::atomic<bool>* stop, const StageCallback& on_stage) {
  report::RunResult result;
  result.started_at = utc_timestamp();
  result.isolation = request.isolation;
  result.model = describe_model(request.model);
  result.requested = request.options;
  result.backend.name = request.backend;
  result.scenario.batch = request.inputs.batch;
  result.scenario.warmup_runs = request.scenario.warmup_runs;
  result.scenario.timed_runs = request.scenario.timed_runs;
  result.scenario.seed = request.inputs.seed;
  std::string stage = "starting";
  auto enter = [&](std::string next) {
    stage = std::move(next);
    if (on_stage) on_stage(stage);
  };

  auto environment = probes::capture_environment();
  try {
    enter("loading the backend plugin");
    check_request(request);
    auto backend = registry.load(request.backend);
    result.backend = (*backend)->info();
    environment.libraries[result.backend.framework] = result.backend.version;

    enter("loading the model");
    const bool peak_reset = probes::reset_peak_rss();
    result.memory.rss_before_load_mb = probes::read_process_memory().rss_mb;
    auto start = mono_now_ns();
    auto session = (*backend)->open(request.model, request.options);
    result.timing.load_ms = ms_since(start);
    result.memory.rss_after_load_mb = probes::read_process_memory().rss_mb;
    result.model.inputs = session->input_specs();
    result.model.outputs = session->output_specs();

    enter("generating inputs");
    auto inputs = generate_inputs(session->input_specs(), request.inputs);
    for (const auto& t : inputs) result.scenario.inputs.push_back({t.name, t.dtype, t.shape, {}});
    // The batch actually fed (a --shape override or a fixed model batch may differ from --batch).
    if (!inputs.empty() && !inputs[0].shape.empty()) result.scenario.batch = inputs[0].shape[0];

    enter("binding inputs");
    start = mono_now_ns();
    session->set_inputs(inputs);
    result.timing.prepare_ms = ms_since(start);
    result.effective_settings = session->effective_settings();

    enter("running");
    const auto log = loadgen::run_single_stream(*session, request.scenario, stop);
    result.timing.first_inference_ms = log.first_warmup_ms;
    fill_throughput(result, log);
    if (log.interrupted || (stop && stop->load())) {
      result.status = "interrupted";
      result.error = "stopped by the user after " + std::to_string(log.latencies_ms.size()) + " timed runs";
    }
    result.memory.peak_rss_mb = probes::read_process_memory().peak_rss_mb;
    if (!request.outputs_dir.empty()) {
      enter("saving outputs");
      save_outputs(*session, request.outputs_dir);
      result.outputs_dir = request.outputs_dir.string();
    }
    result.memory.peak_scope = (request.isolation == "worker process" ? "worker process" : "this process") +
                               std::string(peak_reset ? ": model load, warm-up and timed runs" : ": since process start (peak reset refused)");
  } catch (const std::exception& e) {
    result.status = "failed";
    result.error = request.backend + ": " + e.what() + " (while " + stage + ")";
  }
  result.environment = probes::to_json(environment);
  return result;
}

}  // namespace infermark::harness

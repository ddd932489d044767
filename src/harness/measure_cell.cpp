#include "harness/measure_cell.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <exception>
#include <string_view>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/output_kind.hpp"
#include "harness/label_check.hpp"
#include "harness/local_system.hpp"
#include "harness/measure_generation.hpp"
#include "probes/environment.hpp"
#include "probes/memory.hpp"
#include "probes/resource_sampler.hpp"
#include "result/cell_json.hpp"

namespace infermark::harness {
namespace {

double ms_since(std::int64_t start_ns) { return static_cast<double>(mono_now_ns() - start_ns) * 1e-6; }

// A framework's message as the cause of a failed cell: its surrounding blank lines dropped (LibTorch's
// and ONNX Runtime's end in a line break, some start with one), and never empty.
std::string failure_cause(std::string_view message) {
  const auto first = message.find_first_not_of(" \t\r\n"), last = message.find_last_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "an exception without a message";
  return std::string(message.substr(first, last - first + 1));
}

// Validates before anything is loaded: an impossible request fails fast, naming the flag.
void check_request(const result::CellRequest& request) {
  result::check_model_file(request.model);
  loadgen::validate(request.scenario);
}

void save_outputs(Session& session, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& tensor : session.outputs()) write_npy(tensor, result::output_file(dir, tensor.name));
}

// What a varying-shape run fed: its ranges, every distinct shape with the queries that ran on it
// and their latency, and the mean input elements per query (the work per query, against a fixed
// shape's). Counts and latency are the headline phase's (or every phase's).
result::VaryingShapesRecord varying_shapes_record(const VaryingShapes& varying, const loadgen::InputSetLibrary& library,
                                                  const std::vector<std::string>& group_labels,
                                                  const std::optional<result::HeadlineFigures>& headline) {
  result::VaryingShapesRecord record;
  record.bucketed = bucketed(varying);
  for (const auto& [name, range] : varying.ranges) record.ranges[name] = format_shape_range(range);
  static const std::vector<stats::LatencyHistogram> kNone;
  const auto& groups = headline ? headline->recorder.latency_by_group() : kNone;
  const auto ms = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-6; };
  double elements = 0, total = 0;
  for (std::uint32_t g = 0; g < library.group_count(); ++g) {
    result::ShapeSetRecord row;
    row.input_elements = library.elements_of_group(g);
    if (g < groups.size()) {
      const auto& h = groups[g];
      row.group = g < group_labels.size() ? group_labels[g] : std::to_string(g);
      row.queries = h.count();
      if (h.count()) {
        row.p50_ms = ms(h.value_at_percentile(50));
        row.p90_ms = ms(h.value_at_percentile(90));
        row.p99_ms = ms(h.value_at_percentile(99));
        row.mean_ms = h.mean() * 1e-6;
      }
    } else {
      row.group = library.group_label(g);
    }
    elements += row.input_elements * static_cast<double>(row.queries);
    total += static_cast<double>(row.queries);
    record.sets.push_back(std::move(row));
  }
  record.distinct_shapes = library.group_count();
  record.input_sets = library.sample_count();
  record.mean_input_elements = total > 0 ? elements / total : 0.0;
  return record;
}

}  // namespace

result::RunResult measure_in_stages(const result::CellRequest& request, const StageCallback& on_stage, const CellBody& body) {
  auto result = result::result_for_cell(request);
  std::string stage = "starting";
  const std::function<void(std::string)> enter = [&](std::string next) {
    stage = std::move(next);
    if (on_stage) on_stage(stage);
  };
  auto environment = probes::capture_environment();
  try {
    body(result, environment, enter);
  } catch (const std::exception& e) {
    result.status = result::CellStatus::kFailed;
    result.error = request.backend + ": " + failure_cause(e.what()) + " (while " + stage + ")";
  } catch (...) {
    // Not a std::exception (a framework's own type): still this cell's failure, not the worker's end.
    result.status = result::CellStatus::kFailed;
    result.error = request.backend + ": an exception that is not a std::exception (while " + stage + ")";
  }
  result.environment = probes::to_json(environment);
  return result;
}

probes::EnergyTarget energy_target_for(const SessionOptions& options, const std::vector<EffectiveSetting>& settings) {
  const bool refused = std::any_of(settings.begin(), settings.end(), [&](const EffectiveSetting& setting) {
    return setting.requested == options.device && !setting.applied();
  });
  return probes::energy_target_for_device(refused ? "cpu" : options.device);
}

result::RunResult measure_cell(const BackendRegistry& registry, const result::CellRequest& request, const std::atomic<bool>* stop,
                               const StageCallback& on_stage) {
  if (is_language_model(request.model)) return measure_generation_cell(registry, request, stop, on_stage);
  return measure_in_stages(
      request, on_stage, [&](result::RunResult& result, probes::Environment& environment, const auto& enter) {
        enter("loading the backend plugin");
        check_request(request);
        auto backend = registry.load(request.backend);
        result.backend = (*backend)->info();
        environment.libraries[result.backend.framework] = result.backend.version;
        const int lanes = loadgen::lanes_needed(request.scenario, environment.logical_cores);
        auto options = request.options;
        options.expected_concurrency = lanes;
        if (!request.outputs_dir.empty()) {
          std::filesystem::create_directories(request.outputs_dir);
          options.artifacts_dir = request.outputs_dir.string();
        }
        result.requested = options;

        enter("loading the model");
        const bool peak_reset = probes::reset_peak_rss();
        result.memory.rss_before_load_mb = probes::read_process_memory().rss_mb;
        auto start = mono_now_ns();
        auto session = (*backend)->open(request.model, options);
        result.timing.load_ms = ms_since(start);
        if (const auto version = session->library_version(); !version.empty())
          result.backend.version = environment.libraries[result.backend.framework] = version;
        result.memory.rss_after_load_mb = probes::read_process_memory().rss_mb;
        result.model.inputs = session->input_specs();
        result.model.outputs = session->output_specs();

        enter("generating inputs");
        const auto input_sets = generate_input_sets(session->input_specs(), request.inputs);
        const auto& inputs = input_sets.front();  // with varying shapes, the first set stands for the others here
        for (const auto& t : inputs) result.scenario.inputs.push_back({t.name, t.dtype, t.shape, {}});
        // The batch actually fed (a --shape override or a fixed model batch may differ from --batch).
        if (!inputs.empty() && !inputs[0].shape.empty()) result.scenario.batch = inputs[0].shape[0];

        enter("binding inputs");
        start = mono_now_ns();
        LocalSystem system(**backend, request.model, options, std::move(session), input_sets, lanes, request.sessions,
                           bucketed(request.inputs.varying));
        result.timing.prepare_ms = ms_since(start);
        result.effective_settings = system.primary().effective_settings();
        result.scenario.parameters.lanes = lanes;
        result.scenario.parameters.session_sharing = system.sharing();
        result.scenario.parameters.sessions = request.sessions;

        enter("running");
        start = mono_now_ns();
        loadgen::Completion unused;
        system.issue(0, {}, unused);  // the first query pays lazy initialisation; it counts as warm-up
        result.timing.first_inference_ms = ms_since(start);
        const auto run = loadgen::run_sampled(system, request.scenario, environment.logical_cores, stop,
                                              energy_target_for(options, result.effective_settings));
        const auto& outcome = run.outcome;
        const auto headline = result::record_outcome(result, request, outcome, run.resources, run.sampler_start_ns);
        if (request.inputs.varying.active())
          result.scenario.parameters.varying_shapes =
              varying_shapes_record(request.inputs.varying, system.samples(), outcome.group_labels, headline);
        result::record_peak_memory(result, request, peak_reset);
        if (!request.outputs_dir.empty()) {
          enter("saving outputs");
          if (request.inputs.varying.active()) {
            // Every input set's outputs, so the cross-check compares backends on every shape drawn.
            std::vector<std::string> set_groups;
            for (std::uint32_t set = 0; set < system.samples().sample_count(); ++set) {
              system.primary().run_set(0, set);
              save_outputs(system.primary(), result::sample_outputs_dir(request.outputs_dir, set));
              set_groups.push_back(system.samples().group_label(system.samples().group_of(set)));
            }
            result.scenario.parameters.varying_shapes->set_groups = std::move(set_groups);
            system.primary().run_set(0, 0);  // the top-level outputs are the first set's, as before
          }
          save_outputs(system.primary(), request.outputs_dir);
          result.outputs_dir = request.outputs_dir.string();
        }
        if (!request.inputs.files.empty()) {
          enter("checking outputs against the inputs' labels");
          result.label_accuracy = check_labels(request.inputs.files, system.primary().outputs());
        }
      });
}

}  // namespace infermark::harness

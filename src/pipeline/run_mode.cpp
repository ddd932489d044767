// One mode of a pipeline run: the pipeline opened as a system under test, warmed up with its own
// untimed requests, then the scenario applied by the load generator, as for any other system.
#include <algorithm>
#include <chrono>
#include <thread>

#include "core/clock.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/sampled_run.hpp"
#include "pipeline/pipeline_run.hpp"

namespace infermark::pipeline {

int pipeline_depth(const PipelineSpec& spec, PipelineMode mode) {
  if (mode == PipelineMode::kSerial) return 1;
  const int stages = static_cast<int>(spec.stages.size());
  return stages + (stages - 1) * spec.queue_depth;
}

loadgen::ScenarioSpec scenario_for_mode(const PipelineSpec& spec, const LoadRequest& load, PipelineMode mode) {
  auto s = load.scenario;
  if (!load.scenario_given) s.name = loadgen::Scenario::kConcurrency;
  if (!load.concurrency_given) s.concurrency = pipeline_depth(spec, mode);
  if (!load.runs_given) s.max_queries = static_cast<std::uint64_t>(spec.requests);
  if (s.max_queries > 0) s.min_queries = std::min(s.min_queries, s.max_queries);
  s.warmup_queries = static_cast<std::uint64_t>(spec.warmup);
  s.seed = spec.inputs.seed;
  loadgen::validate(s);
  return s;
}

ModeOutcome run_mode(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode, const LoadRequest& load,
                     const RunSettings& settings) {
  ModeOutcome outcome;
  outcome.mode = mode;
  const auto origin_ns = mono_now_ns();
  std::unique_ptr<PipelineSystem> system;
  try {
    outcome.scenario = scenario_for_mode(spec, load, mode);
    const auto& scenario = outcome.scenario;
    const int lanes = loadgen::lanes_needed(scenario, settings.logical_cores);
    system = open_pipeline(registry, spec, mode, lanes, settings);
    // A broken pipeline fails every query at once: stop issuing into it, as on the user's stop.
    std::atomic<bool> halt{false};
    std::jthread watch([&](std::stop_token done) {
      while (!done.stop_requested()) {
        if ((settings.stop && settings.stop->load()) || !system->failure().empty()) halt = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    // The pipeline's own warm-up: untimed requests that bypass the breaker and carry no timeout.
    system->set_warming(true);
    loadgen::warm_up(*system, lanes, scenario.warmup_queries, scenario.warmup_s, scenario.seed, &halt);
    system->set_warming(false);
    auto measured = scenario;
    measured.warmup_queries = 0;
    measured.warmup_s = 0;
    // Sampled as every in-process cell is: energy over the measured phases only (a soak's or a
    // pulse's capacity probe is not in the inference count, so not in the joules either).
    auto run = loadgen::run_sampled(*system, measured, settings.logical_cores, &halt, probes::EnergyTarget{});
    outcome.sampler_start_ns = run.sampler_start_ns;
    outcome.load = std::move(run.outcome);
    outcome.resources = std::move(run.resources);
    watch.request_stop();
    system->close();
  } catch (const std::exception& e) {
    outcome.status = result::CellStatus::kFailed;
    outcome.error = e.what();
  }
  if (system) {
    system->close();
    if (const auto failure = system->failure(); !failure.empty()) {
      outcome.status = result::CellStatus::kFailed;
      outcome.error = failure;
    }
    outcome.stages = system->stages();
    outcome.records = system->take_records();
    // Requests before the measurement (a capacity probe sizing soak or pulse) are not the scenario's.
    if (outcome.load) {
      const auto from = outcome.load->measured_from_ns;
      std::erase_if(outcome.records, [from](const RequestRecord& r) { return r.admitted_ns < from; });
    }
    outcome.last_sample = system->last_sample();
    outcome.last_outputs = system->take_last_outputs();
    outcome.text_check = system->text_check();
    outcome.breaker =
        result::breaker_record_of(system->breaker(), outcome.records.empty() ? origin_ns : outcome.records.front().admitted_ns);
  }
  if (outcome.status == result::CellStatus::kOk && settings.stop && settings.stop->load())
    outcome.status = result::CellStatus::kInterrupted;
  return outcome;
}

}  // namespace infermark::pipeline

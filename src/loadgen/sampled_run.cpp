#include "loadgen/sampled_run.hpp"

#include "core/clock.hpp"

namespace infermark::loadgen {

std::vector<probes::TimeWindow> measured_windows(const loadgen::ScenarioOutcome& outcome) {
  std::vector<probes::TimeWindow> windows;
  for (const auto& phase : outcome.phases)
    windows.push_back({phase.started_ns, phase.started_ns + static_cast<std::int64_t>(phase.duration_s * 1e9)});
  return windows;
}

SampledRun run_sampled(loadgen::SystemUnderTest& system, const loadgen::ScenarioSpec& spec, int logical_cores,
                       const std::atomic<bool>* stop, const probes::EnergyTarget& energy, double period_s) {
  probes::ResourceSampler sampler(period_s, energy);
  sampler.start();
  const auto sampler_start_ns = mono_now_ns();
  // The warm-up's last joules end here: read the counter at that instant.
  auto outcome = loadgen::run_scenario(system, spec, logical_cores, stop, [&sampler] { sampler.mark(); });
  auto resources = sampler.stop(measured_windows(outcome));
  return {std::move(outcome), std::move(resources), sampler_start_ns};
}

}  // namespace infermark::loadgen

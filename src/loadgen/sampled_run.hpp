// A scenario run with the resource sampler on, its energy counted over the measured phases only:
// what every in-process system under test (cells, pipelines) is measured with.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "loadgen/scenario.hpp"
#include "loadgen/system_under_test.hpp"
#include "probes/energy_target.hpp"
#include "probes/resource_sampler.hpp"

namespace infermark::loadgen {

// The measured phases' spans (mono_now_ns's clock): what a cell's inference count covers, and so
// the only spans its energy is counted over (not the warm-up, not a capacity probe).
std::vector<probes::TimeWindow> measured_windows(const loadgen::ScenarioOutcome& outcome);

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

}  // namespace infermark::loadgen

// Resource use during a run, sampled on a background thread: process RSS and CPU, system CPU,
// context switches, page faults, and the energy of the device the cell runs on (RAPL for the CPU,
// NVML for an NVIDIA GPU), over the measured phases only. A probe that cannot be read is reported
// as unavailable, with the reason, never as zero.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/energy_counter.hpp"
#include "probes/energy_target.hpp"
#include "probes/nvml.hpp"

namespace infermark::probes {

struct ResourceSample {
  double t_s = 0.0;  // since start()
  double rss_mb = 0.0;
  double process_cpu_percent = 0.0;  // over the last sampling period; 100 = one core busy
  double system_cpu_percent = 0.0;   // all cores, 100 = every core busy
};

struct EnergyReading {
  bool available = false;
  std::string source;   // "rapl:package-0+...", "nvml:gpu0", or why unavailable
  double joules = 0.0;  // within the measured phases (older files: the whole sampled span)
  // The seconds those joules cover: the measured phases' durations summed, the span the
  // inference count covers too. Unknown (NaN) in files written before it was recorded.
  double seconds = std::numeric_limits<double>::quiet_NaN();
  std::string device = "";  // the device the figure is for: "cpu", "gpu0" ("" in older files)
};

struct ResourceSummary {
  double duration_s = 0.0;
  double peak_rss_mb = 0.0;  // max over samples and the kernel's VmHWM at stop
  double mean_rss_mb = 0.0;
  double process_cpu_seconds = 0.0;  // user + system CPU time of this process over the span
  double mean_process_cpu_percent = 0.0;
  double mean_system_cpu_percent = 0.0;
  std::uint64_t voluntary_context_switches = 0;
  std::uint64_t involuntary_context_switches = 0;
  std::uint64_t minor_page_faults = 0;
  std::uint64_t major_page_faults = 0;
  EnergyReading energy;
  GpuReading gpu;
  std::vector<ResourceSample> samples;
};

class ResourceSampler {
 public:
  // Energy is read from `energy`'s device only (energy_target_for_device).
  explicit ResourceSampler(double period_s = 0.1, const EnergyTarget& energy = {});
  ~ResourceSampler();  // stops the thread if still running
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  void start();  // takes baselines and starts the sampling thread
  // Reads the energy counter now: called at the edge of a measured phase (the end of the warm-up),
  // the edge needs no interpolation between the periodic reads.
  void mark();
  // Stops, takes final readings, returns deltas over the span; the energy over the whole span.
  ResourceSummary stop();
  // The same, but the energy only within `measured` (the measured phases, on mono_now_ns's clock):
  // warm-up and capacity probes between or before them are not counted.
  ResourceSummary stop(const std::vector<TimeWindow>& measured);

 private:
  void loop();
  ResourceSummary finish(const std::optional<std::vector<TimeWindow>>& measured);
  double period_s_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  // baselines and accumulated samples live in the .cpp's private state
  struct State;
  std::unique_ptr<State> state_;
};

// "inferences per joule" when energy is available, else nullopt.
std::optional<double> inferences_per_joule(const EnergyReading& energy, double inferences);

// Mean power over the span the joules cover; a file without that span (older than the measured-phase
// energy) covered its whole sampled span, `sampled_s`. nullopt when energy is unknown.
std::optional<double> mean_watts(const EnergyReading& energy, double sampled_s);

nlohmann::json to_json(const ResourceSummary& summary);
// Reads what to_json wrote; fields absent from older files keep their defaults.
ResourceSummary resource_summary_from(const nlohmann::json& json);

}  // namespace infermark::probes

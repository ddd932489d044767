// Resource use during a run, sampled on a background thread: process RSS and CPU, system CPU,
// context switches, page faults, and energy from RAPL (powercap) or NVML where readable. A probe
// that cannot be read is reported as unavailable, never as zero.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

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
  double joules = 0.0;  // over the sampled span
};

struct GpuReading {
  bool available = false;
  std::string reason;  // why unavailable ("no NVIDIA driver (libnvidia-ml.so.1 not found)")
  double peak_memory_mb = 0.0;
  double mean_power_w = 0.0;
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
  explicit ResourceSampler(double period_s = 0.1);
  ~ResourceSampler();  // stops the thread if still running
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  void start();            // takes baselines and starts the sampling thread
  ResourceSummary stop();  // stops, takes final readings, returns deltas over the span

 private:
  void loop();
  double period_s_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  // baselines and accumulated samples live in the .cpp's private state
  struct State;
  std::unique_ptr<State> state_;
};

// "inferences per joule" when energy is available, else nullopt.
std::optional<double> inferences_per_joule(const EnergyReading& energy, double inferences);

nlohmann::json to_json(const ResourceSummary& summary);
// Reads what to_json wrote; fields absent from older files keep their defaults.
ResourceSummary resource_summary_from(const nlohmann::json& json);

}  // namespace infermark::probes

#include "probes/resource_sampler.hpp"

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <system_error>
#include <utility>

#include "core/json_fields.hpp"
#include "probes/memory.hpp"
#include "probes/rapl.hpp"

namespace infermark::probes {
namespace {

using Clock = std::chrono::steady_clock;

// A probe value that could not be read is carried as NaN in the public structs, which have no
// other way to say "unknown", and becomes JSON null: an unknown value must never read as zero.
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
constexpr double kMinPeriodS = 0.001;  // guards against a busy-spinning sampler
constexpr double kBytesPerMib = 1024.0 * 1024.0;
constexpr double kMicro = 1e-6;
constexpr double kMilli = 1e-3;
const char* const kNvmlLibrary = "libnvidia-ml.so.1";

double seconds_between(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

double percent(double part, double whole) { return whole > 0.0 ? 100.0 * part / whole : 0.0; }

// Counters are monotonic in theory; a reading that goes backwards must not wrap to 2^64.
std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after) { return after > before ? after - before : 0; }

// ---- Process counters (getrusage covers every thread of the process) -----------------------

struct ProcessCounters {
  double cpu_seconds = 0.0;  // user + system
  std::uint64_t voluntary_switches = 0;
  std::uint64_t involuntary_switches = 0;
  std::uint64_t minor_faults = 0;
  std::uint64_t major_faults = 0;
};

double timeval_seconds(const timeval& value) {
  return static_cast<double>(value.tv_sec) + static_cast<double>(value.tv_usec) * kMicro;
}

ProcessCounters read_process_counters() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return {};
  return {timeval_seconds(usage.ru_utime) + timeval_seconds(usage.ru_stime), static_cast<std::uint64_t>(usage.ru_nvcsw),
          static_cast<std::uint64_t>(usage.ru_nivcsw), static_cast<std::uint64_t>(usage.ru_minflt),
          static_cast<std::uint64_t>(usage.ru_majflt)};
}

// ---- System CPU from the aggregate "cpu " line of /proc/stat -------------------------------

struct SystemCpu {
  std::uint64_t busy = 0;  // jiffies not idle and not waiting for I/O
  std::uint64_t total = 0;
};

SystemCpu read_system_cpu() {
  std::ifstream file("/proc/stat");
  std::string label;
  file >> label;
  if (label != "cpu") return {};
  // user nice system idle iowait irq softirq steal; guest time is already inside user/nice.
  std::uint64_t fields[8] = {};
  for (auto& field : fields) file >> field;
  const std::uint64_t total = std::accumulate(std::begin(fields), std::end(fields), 0ULL);
  const std::uint64_t idle = fields[3] + fields[4];
  return {total > idle ? total - idle : 0, total};
}

double system_cpu_percent(const SystemCpu& before, const SystemCpu& after) {
  // Signed arithmetic: iowait is known to step backwards on some kernels.
  const double busy = static_cast<double>(after.busy) - static_cast<double>(before.busy);
  const double total = static_cast<double>(after.total) - static_cast<double>(before.total);
  return std::clamp(percent(busy, total), 0.0, 100.0);
}

// Everything read at the same instant: the start baseline, each sample, the final reading.
struct Reading {
  Clock::time_point time;
  ProcessCounters process;
  SystemCpu system;
};

Reading take_reading() { return {Clock::now(), read_process_counters(), read_system_cpu()}; }

// ---- NVIDIA GPU through NVML, loaded at run time so the build needs no CUDA ---------------

// The few NVML ABI pieces used here, declared locally instead of including nvml.h.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*device_count)(unsigned int*) = nullptr;
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*memory_info)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;         // milliwatts
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;  // millijoules
};

template <typename Function>
bool load_symbol(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// Returns the name of the first missing symbol, or nullptr when all were found.
const char* load_nvml_api(void* library, NvmlApi& api) {
  if (!load_symbol(library, "nvmlInit_v2", api.init)) return "nvmlInit_v2";
  if (!load_symbol(library, "nvmlShutdown", api.shutdown)) return "nvmlShutdown";
  if (!load_symbol(library, "nvmlErrorString", api.error_string)) return "nvmlErrorString";
  if (!load_symbol(library, "nvmlDeviceGetCount_v2", api.device_count)) {
    return "nvmlDeviceGetCount_v2";
  }
  if (!load_symbol(library, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index)) {
    return "nvmlDeviceGetHandleByIndex_v2";
  }
  if (!load_symbol(library, "nvmlDeviceGetMemoryInfo", api.memory_info)) {
    return "nvmlDeviceGetMemoryInfo";
  }
  if (!load_symbol(library, "nvmlDeviceGetPowerUsage", api.power_usage)) {
    return "nvmlDeviceGetPowerUsage";
  }
  // Energy is Volta and newer; older drivers may lack the symbol, which only costs energy.
  load_symbol(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
  return nullptr;
}

class NvmlGpu {
 public:
  NvmlGpu() = default;
  NvmlGpu(const NvmlGpu&) = delete;
  NvmlGpu& operator=(const NvmlGpu&) = delete;
  ~NvmlGpu() {
    if (initialised_) api_.shutdown();
    if (library_ != nullptr) ::dlclose(library_);
  }

  // Opens device 0 once; later calls only reset the per-span figures.
  void start() {
    if (!attempted_) {
      attempted_ = true;
      open();
    }
    peak_memory_mb_ = kUnknown;
    power_sum_w_ = 0.0;
    power_count_ = 0;
    start_energy_mj_ = read_energy_mj();
  }

  void sample() {
    if (!initialised_) return;
    NvmlMemory memory{};
    if (api_.memory_info(device_, &memory) == kNvmlSuccess) {
      const double used_mb = static_cast<double>(memory.used) / kBytesPerMib;
      peak_memory_mb_ = std::isnan(peak_memory_mb_) ? used_mb : std::max(peak_memory_mb_, used_mb);
    }
    unsigned int milliwatts = 0;
    if (api_.power_usage(device_, &milliwatts) == kNvmlSuccess) {
      power_sum_w_ += milliwatts * kMilli;
      ++power_count_;
    }
  }

  GpuReading reading() const {
    GpuReading reading;
    reading.available = initialised_;
    reading.reason = reason_;
    reading.peak_memory_mb = initialised_ ? peak_memory_mb_ : kUnknown;
    reading.mean_power_w = power_count_ > 0 ? power_sum_w_ / power_count_ : kUnknown;
    return reading;
  }

  // Joules since start(), or why not.
  std::optional<double> energy_joules(std::string& why_not) const {
    const auto end_mj = read_energy_mj();
    if (start_energy_mj_ && end_mj && *end_mj >= *start_energy_mj_) {
      return static_cast<double>(*end_mj - *start_energy_mj_) * kMilli;
    }
    why_not = initialised_ ? "NVML energy counter not supported on gpu0" : reason_;
    return std::nullopt;
  }

 private:
  void open() {
    library_ = ::dlopen(kNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      reason_ = "no NVIDIA driver (" + std::string(kNvmlLibrary) + " not found)";
      return;
    }
    if (const char* missing = load_nvml_api(library_, api_)) {
      reason_ = std::string(kNvmlLibrary) + " lacks " + missing;
      return;
    }
    if (const NvmlReturn status = api_.init(); status != kNvmlSuccess) {
      reason_ = "nvmlInit failed: " + nvml_error(status);
      return;
    }
    initialised_ = true;
    unsigned int count = 0;
    const NvmlReturn status = api_.device_count(&count);
    if (status == kNvmlSuccess && count > 0 && api_.device_by_index(0, &device_) == kNvmlSuccess) {
      return;
    }
    reason_ = status != kNvmlSuccess ? "nvmlDeviceGetCount failed: " + nvml_error(status)
              : count == 0           ? "NVML reports no GPUs"
                                     : "NVML could not open gpu0";
    api_.shutdown();
    initialised_ = false;
  }

  std::string nvml_error(NvmlReturn status) const {
    const char* text = api_.error_string(status);
    return text != nullptr ? text : "error " + std::to_string(status);
  }

  std::optional<unsigned long long> read_energy_mj() const {
    unsigned long long millijoules = 0;
    if (!initialised_ || api_.total_energy == nullptr || api_.total_energy(device_, &millijoules) != kNvmlSuccess) {
      return std::nullopt;
    }
    return millijoules;
  }

  bool attempted_ = false;
  bool initialised_ = false;
  void* library_ = nullptr;
  NvmlApi api_;
  NvmlDevice device_ = nullptr;
  std::string reason_;
  double peak_memory_mb_ = kUnknown;
  double power_sum_w_ = 0.0;
  int power_count_ = 0;
  std::optional<unsigned long long> start_energy_mj_;
};

// ---- Summary helpers -----------------------------------------------------------------------

template <typename Field>
double mean_of(const std::vector<ResourceSample>& samples, Field field) {
  double sum = 0.0;
  for (const ResourceSample& sample : samples) sum += sample.*field;
  return sum / static_cast<double>(samples.size());
}

void fill_counters(ResourceSummary& summary, const ProcessCounters& before, const ProcessCounters& after) {
  summary.process_cpu_seconds = std::max(0.0, after.cpu_seconds - before.cpu_seconds);
  summary.voluntary_context_switches = counter_delta(before.voluntary_switches, after.voluntary_switches);
  summary.involuntary_context_switches = counter_delta(before.involuntary_switches, after.involuntary_switches);
  summary.minor_page_faults = counter_delta(before.minor_faults, after.minor_faults);
  summary.major_page_faults = counter_delta(before.major_faults, after.major_faults);
}

// Means over the samples; a span too short for any sample falls back to the whole span.
void fill_means(ResourceSummary& summary, const Reading& start, const Reading& end, const MemoryReading& memory) {
  const auto& samples = summary.samples;
  double peak_sampled = 0.0;
  for (const ResourceSample& sample : samples) peak_sampled = std::max(peak_sampled, sample.rss_mb);
  summary.peak_rss_mb = std::max({peak_sampled, memory.peak_rss_mb, memory.rss_mb});
  if (samples.empty()) {
    summary.mean_rss_mb = memory.rss_mb;
    summary.mean_process_cpu_percent = percent(summary.process_cpu_seconds, summary.duration_s);
    summary.mean_system_cpu_percent = system_cpu_percent(start.system, end.system);
    return;
  }
  summary.mean_rss_mb = mean_of(samples, &ResourceSample::rss_mb);
  summary.mean_process_cpu_percent = mean_of(samples, &ResourceSample::process_cpu_percent);
  summary.mean_system_cpu_percent = mean_of(samples, &ResourceSample::system_cpu_percent);
}

nlohmann::json number_or_null(bool available, double value) {
  if (!available || !std::isfinite(value)) return nullptr;
  return value;
}

nlohmann::json sample_json(const ResourceSample& sample) {
  return {{"t_s", sample.t_s},
          {"rss_mb", sample.rss_mb},
          {"process_cpu_percent", sample.process_cpu_percent},
          {"system_cpu_percent", sample.system_cpu_percent}};
}

}  // namespace

// ---- Sampler -------------------------------------------------------------------------------

struct ResourceSampler::State {
  bool started = false;
  Reading baseline;
  Reading last;  // previous sample, for per-period rates
  std::vector<ResourceSample> samples;
  RaplMeter rapl;
  NvmlGpu gpu;
  // Wakes the sampling thread at stop() instead of letting it sleep out its period.
  std::mutex mutex;
  std::condition_variable wake;

  void take_sample() {
    const Reading now = take_reading();
    ResourceSample sample;
    sample.t_s = seconds_between(baseline.time, now.time);
    sample.rss_mb = read_process_memory().rss_mb;
    sample.process_cpu_percent =
        std::max(0.0, percent(now.process.cpu_seconds - last.process.cpu_seconds, seconds_between(last.time, now.time)));
    sample.system_cpu_percent = system_cpu_percent(last.system, now.system);
    samples.push_back(sample);
    last = now;
    rapl.update();
    gpu.sample();
  }

  EnergyReading energy() const {
    if (rapl.available()) return {true, rapl.source(), rapl.joules()};
    std::string nvml_reason;
    if (const auto joules = gpu.energy_joules(nvml_reason)) return {true, "nvml:gpu0", *joules};
    return {false, rapl.source() + "; " + nvml_reason, kUnknown};
  }

  void halt(std::atomic<bool>& running, std::thread& thread) {
    {
      // Under the lock, so the thread cannot miss the change between its check and its wait.
      const std::lock_guard lock(mutex);
      running = false;
    }
    wake.notify_all();
    if (thread.joinable()) thread.join();
  }
};

ResourceSampler::ResourceSampler(double period_s)
    : period_s_(std::max(period_s, kMinPeriodS)), state_(std::make_unique<State>()) {}

ResourceSampler::~ResourceSampler() { state_->halt(running_, thread_); }

void ResourceSampler::start() {
  if (running_) return;  // one span at a time; the running one continues
  State& state = *state_;
  state.gpu.start();  // before the baselines: loading NVML is not part of the measured span
  state.rapl.start();
  state.samples.clear();
  state.baseline = take_reading();
  state.last = state.baseline;
  state.started = true;
  running_ = true;
  try {
    thread_ = std::thread(&ResourceSampler::loop, this);
  } catch (const std::system_error&) {
    running_ = false;  // no thread, no samples: stop() still reports the span's totals
  }
}

void ResourceSampler::loop() {
  State& state = *state_;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s_));
  auto next = state.baseline.time;
  std::unique_lock lock(state.mutex);
  while (true) {
    // Skip ticks that were missed (a stalled machine) rather than sampling in a burst.
    do next += period;
    while (next <= Clock::now());
    if (state.wake.wait_until(lock, next, [this] { return !running_; })) return;
    lock.unlock();
    state.take_sample();
    lock.lock();
  }
}

ResourceSummary ResourceSampler::stop() {
  State& state = *state_;
  ResourceSummary summary;
  if (!state.started) {
    summary.energy = {false, "resource sampler was not started", kUnknown};
    summary.gpu = {false, "resource sampler was not started", kUnknown, kUnknown};
    return summary;
  }
  state.halt(running_, thread_);
  state.started = false;

  const Reading end = take_reading();
  const MemoryReading memory = read_process_memory();
  state.rapl.update();
  state.gpu.sample();

  summary.duration_s = seconds_between(state.baseline.time, end.time);
  summary.samples = std::move(state.samples);
  state.samples.clear();
  fill_counters(summary, state.baseline.process, end.process);
  fill_means(summary, state.baseline, end, memory);
  summary.energy = state.energy();
  summary.gpu = state.gpu.reading();
  return summary;
}

std::optional<double> inferences_per_joule(const EnergyReading& energy, double inferences) {
  if (!energy.available || !(energy.joules > 0.0)) return std::nullopt;
  return inferences / energy.joules;
}

nlohmann::json to_json(const ResourceSummary& summary) {
  const EnergyReading& energy = summary.energy;
  const GpuReading& gpu = summary.gpu;
  nlohmann::json samples = nlohmann::json::array();
  for (const ResourceSample& sample : summary.samples) samples.push_back(sample_json(sample));
  return {
      {"duration_s", summary.duration_s},
      {"peak_rss_mb", summary.peak_rss_mb},
      {"mean_rss_mb", summary.mean_rss_mb},
      {"process_cpu_seconds", summary.process_cpu_seconds},
      {"mean_process_cpu_percent", summary.mean_process_cpu_percent},
      {"mean_system_cpu_percent", summary.mean_system_cpu_percent},
      {"voluntary_context_switches", summary.voluntary_context_switches},
      {"involuntary_context_switches", summary.involuntary_context_switches},
      {"minor_page_faults", summary.minor_page_faults},
      {"major_page_faults", summary.major_page_faults},
      {"energy",
       {{"available", energy.available}, {"source", energy.source}, {"joules", number_or_null(energy.available, energy.joules)}}},
      {"gpu",
       {{"available", gpu.available},
        {"reason", gpu.reason},
        {"peak_memory_mb", number_or_null(gpu.available, gpu.peak_memory_mb)},
        {"mean_power_w", number_or_null(gpu.available, gpu.mean_power_w)}}},
      {"samples", std::move(samples)},
  };
}

ResourceSummary resource_summary_from(const nlohmann::json& j) {
  ResourceSummary s;
  s.duration_s = number(j, "duration_s");
  s.peak_rss_mb = number(j, "peak_rss_mb");
  s.mean_rss_mb = number(j, "mean_rss_mb");
  s.process_cpu_seconds = number(j, "process_cpu_seconds");
  s.mean_process_cpu_percent = number(j, "mean_process_cpu_percent");
  s.mean_system_cpu_percent = number(j, "mean_system_cpu_percent");
  s.voluntary_context_switches = count(j, "voluntary_context_switches");
  s.involuntary_context_switches = count(j, "involuntary_context_switches");
  s.minor_page_faults = count(j, "minor_page_faults");
  s.major_page_faults = count(j, "major_page_faults");
  if (j.contains("energy") && j["energy"].is_object()) {
    const auto& e = j["energy"];
    // null (not measured) stays unknown in memory too, never 0 J.
    s.energy = {e.value("available", false), e.value("source", ""), optional_number(e, "joules").value_or(kUnknown)};
  }
  if (j.contains("gpu") && j["gpu"].is_object()) {
    const auto& g = j["gpu"];
    s.gpu = {g.value("available", false), g.value("reason", ""), optional_number(g, "peak_memory_mb").value_or(kUnknown),
             optional_number(g, "mean_power_w").value_or(kUnknown)};
  }
  for (const auto& sample : j.value("samples", nlohmann::json::array()))
    s.samples.push_back({number(sample, "t_s"), number(sample, "rss_mb"), number(sample, "process_cpu_percent"),
                         number(sample, "system_cpu_percent")});
  return s;
}

}  // namespace infermark::probes

#include "probes/resource_sampler.hpp"

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

#include "core/clock.hpp"
#include "core/json_fields.hpp"
#include "probes/energy_target.hpp"
#include "probes/memory.hpp"
#include "probes/nvml.hpp"

namespace infermark::probes {
namespace {

using Clock = MonoClock;

// A probe value that could not be read is carried as NaN in the public structs, which have no
// other way to say "unknown", and becomes JSON null: an unknown value must never read as zero.
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
constexpr double kMinPeriodS = 0.001;  // guards against a busy-spinning sampler
constexpr double kMicro = 1e-6;

double seconds_between(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

// The same clock as mono_now_ns() (core/clock.hpp), which the load generator's phases are timed on.
std::int64_t time_ns(Clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

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
  explicit State(const EnergyTarget& target)
      : energy_label(device_label(target)),
        energy(open_energy_counter(target)),
        gpu(target.device == EnergyDevice::kNvidiaGpu ? target.gpu_index : 0) {}

  bool started = false;
  Reading baseline;
  Reading last;  // previous sample, for per-period rates
  std::vector<ResourceSample> samples;
  std::string energy_label;               // the device the energy is for: "cpu", "gpu0"
  std::unique_ptr<EnergyCounter> energy;  // that device's counter, and no other
  std::vector<EnergyMark> energy_marks;   // its joules since start(), at each read
  std::mutex energy_mutex;                // mark() reads from the caller's thread too
  NvmlGpu gpu;
  // Wakes the sampling thread at stop() instead of letting it sleep out its period.
  std::mutex mutex;
  std::condition_variable wake;

  void mark_energy() {
    const std::lock_guard lock(energy_mutex);
    energy->update();
    energy_marks.push_back({mono_now_ns(), energy->joules()});
  }

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
    mark_energy();
    gpu.sample();
  }

  // The joules of the device's counter within `windows`, or why they are unknown.
  EnergyReading energy_within(const std::vector<TimeWindow>& windows) const {
    EnergyReading reading{false, energy->source(), kUnknown, kUnknown, energy_label};
    if (!energy->available()) return reading;
    if (windows.empty()) {
      reading.source = "no measured phase ran (stopped before the measurement)";
      return reading;
    }
    reading.available = true;
    reading.joules = joules_within(energy_marks, windows);
    reading.seconds = seconds_within(windows);
    return reading;
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

ResourceSampler::ResourceSampler(double period_s, const EnergyTarget& energy)
    : period_s_(std::max(period_s, kMinPeriodS)), state_(std::make_unique<State>(energy)) {}

ResourceSampler::~ResourceSampler() { state_->halt(running_, thread_); }

void ResourceSampler::start() {
  if (running_) return;  // one span at a time; the running one continues
  State& state = *state_;
  state.gpu.start();  // before the baselines: loading NVML is not part of the measured span
  state.samples.clear();
  {
    const std::lock_guard lock(state.energy_mutex);
    state.energy->start();
    state.energy_marks.clear();
  }
  state.baseline = take_reading();
  state.energy_marks.push_back({time_ns(state.baseline.time), 0.0});
  state.last = state.baseline;
  state.started = true;
  running_ = true;
  try {
    thread_ = std::thread(&ResourceSampler::loop, this);
  } catch (const std::system_error&) {
    running_ = false;  // no thread, no samples: stop() still reports the span's totals
  }
}

void ResourceSampler::mark() {
  if (state_->started) state_->mark_energy();
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

ResourceSummary ResourceSampler::stop() { return finish(std::nullopt); }

ResourceSummary ResourceSampler::stop(const std::vector<TimeWindow>& measured) { return finish(measured); }

ResourceSummary ResourceSampler::finish(const std::optional<std::vector<TimeWindow>>& measured) {
  State& state = *state_;
  ResourceSummary summary;
  if (!state.started) {
    summary.energy = {false, "resource sampler was not started", kUnknown, kUnknown, state.energy_label};
    summary.gpu = {false, "resource sampler was not started", kUnknown, kUnknown};
    return summary;
  }
  // First: the last measured phase has just ended, so the energy read here is close to its edge.
  state.mark_energy();
  state.halt(running_, thread_);
  state.started = false;

  const Reading end = take_reading();
  const MemoryReading memory = read_process_memory();
  state.gpu.sample();

  summary.duration_s = seconds_between(state.baseline.time, end.time);
  summary.samples = std::move(state.samples);
  state.samples.clear();
  fill_counters(summary, state.baseline.process, end.process);
  fill_means(summary, state.baseline, end, memory);
  // The whole span from the first read of the counter to the last.
  const std::vector<TimeWindow> whole_span{{state.energy_marks.front().t_ns, state.energy_marks.back().t_ns}};
  summary.energy = state.energy_within(measured ? *measured : whole_span);
  summary.gpu = state.gpu.reading();
  return summary;
}

std::optional<double> inferences_per_joule(const EnergyReading& energy, double inferences) {
  if (!energy.available || !(energy.joules > 0.0)) return std::nullopt;
  return inferences / energy.joules;
}

std::optional<double> mean_watts(const EnergyReading& energy, double sampled_s) {
  const double seconds = std::isfinite(energy.seconds) ? energy.seconds : sampled_s;
  if (!energy.available || !std::isfinite(energy.joules) || !(seconds > 0.0)) return std::nullopt;
  return energy.joules / seconds;
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
       {{"available", energy.available},
        {"source", energy.source},
        {"joules", number_or_null(energy.available, energy.joules)},
        {"seconds", number_or_null(energy.available, energy.seconds)},
        {"device", energy.device}}},
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
    // Files written before energy covered only the measured phases lack "seconds" and "device".
    s.energy = {flag(e, "available"), text(e, "source"), optional_number(e, "joules").value_or(kUnknown),
                optional_number(e, "seconds").value_or(kUnknown), text(e, "device")};
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

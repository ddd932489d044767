#include "probes/memory.hpp"
#include "probes/resource_sampler.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <ctime>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "harness/measure_cell.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::probes {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kPeriodS = 0.05;
constexpr auto kSpan = std::chrono::milliseconds(300);

// Keeps the calling thread on a core for the given time; volatile so the loop is not removed.
// Spins until this thread has used `cpu_seconds` of CPU time: the same work however loaded the
// machine is, so the assertions below do not depend on how much CPU the test was given.
void spin_for_cpu(double cpu_seconds) {
  volatile unsigned long long counter = 0;
  timespec now{};
  do {
    for (int i = 0; i < 100000; ++i) counter = counter + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while (static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 < cpu_seconds);
}

void busy_for(std::chrono::milliseconds span) {
  volatile unsigned long long counter = 0;
  const auto until = Clock::now() + span;
  while (Clock::now() < until) counter = counter + 1;
}

// mmap rather than new: the allocator cannot serve it from pages that are already resident.
class TouchedBlock {
 public:
  explicit TouchedBlock(std::size_t bytes) : bytes_(bytes) {
    block_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block_ == MAP_FAILED) return;
    ::madvise(block_, bytes_, MADV_NOHUGEPAGE);  // one minor fault per 4 KiB page
    std::memset(block_, 1, bytes_);
  }
  ~TouchedBlock() {
    if (ok()) ::munmap(block_, bytes_);
  }
  TouchedBlock(const TouchedBlock&) = delete;
  TouchedBlock& operator=(const TouchedBlock&) = delete;
  bool ok() const { return block_ != MAP_FAILED; }

 private:
  std::size_t bytes_;
  void* block_;
};

TEST(ResourceSampler, BusyLoopShowsProcessCpu) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  timespec before{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before);
  spin_for_cpu(static_cast<double>(before.tv_sec) + before.tv_nsec * 1e-9 + 0.2);
  const ResourceSummary summary = sampler.stop();

  // The process used at least the 0.2 CPU-seconds this thread spun; its share of the span
  // depends on the machine's load, so only that it is positive is asserted.
  EXPECT_GE(summary.process_cpu_seconds, 0.19);
  EXPECT_GT(summary.mean_process_cpu_percent, 0.0);
  EXPECT_GE(summary.mean_system_cpu_percent, 0.0);
  EXPECT_LE(summary.mean_system_cpu_percent, 100.0);
  EXPECT_GT(summary.duration_s, 0.0);
}

TEST(ResourceSampler, SamplesArePeriodicWithIncreasingTime) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  std::this_thread::sleep_for(kSpan);
  const ResourceSummary summary = sampler.stop();

  ASSERT_GE(summary.samples.size(), 2U);
  double previous_t = 0.0;
  for (const ResourceSample& sample : summary.samples) {
    EXPECT_GT(sample.t_s, previous_t);
    EXPECT_GT(sample.rss_mb, 0.0);
    EXPECT_GE(sample.process_cpu_percent, 0.0);
    EXPECT_GE(sample.system_cpu_percent, 0.0);
    EXPECT_LE(sample.system_cpu_percent, 100.0);
    previous_t = sample.t_s;
  }
  EXPECT_LE(previous_t, summary.duration_s);
}

TEST(ResourceSampler, TouchingMemoryRaisesPeakRssAndMinorFaults) {
  constexpr std::size_t kBlockBytes = 100UL << 20;
  constexpr double kMinimumRiseMb = 80.0;
  constexpr std::uint64_t kMinimumFaults = 10'000;  // 25,600 pages of 4 KiB

  const double rss_before = read_process_memory().rss_mb;
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  double sampled_peak = 0.0;
  {
    TouchedBlock block(kBlockBytes);
    ASSERT_TRUE(block.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // let samples see it
    const ResourceSummary summary = sampler.stop();
    EXPECT_GE(summary.peak_rss_mb - rss_before, kMinimumRiseMb);
    EXPECT_GE(summary.minor_page_faults, kMinimumFaults);
    EXPECT_GT(summary.voluntary_context_switches, 0U);  // the sleep above gives up the core
    for (const ResourceSample& sample : summary.samples) {
      sampled_peak = std::max(sampled_peak, sample.rss_mb);
    }
  }
  EXPECT_GE(sampled_peak - rss_before, kMinimumRiseMb);  // the samples saw it, not only VmHWM
}

TEST(ResourceSampler, CountersAreDeltasNotTotals) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  const ResourceSummary summary = sampler.stop();
  // Unsigned deltas: a counter read backwards must not wrap to a huge value.
  constexpr std::uint64_t kImplausible = 1'000'000'000;
  EXPECT_LT(summary.voluntary_context_switches, kImplausible);
  EXPECT_LT(summary.involuntary_context_switches, kImplausible);
  EXPECT_LT(summary.minor_page_faults, kImplausible);
  EXPECT_LT(summary.major_page_faults, kImplausible);
}

TEST(ResourceSampler, ImmediateStopWithoutSamplesWorks) {
  ResourceSampler sampler(10.0);  // far longer than the span: no sample can be taken
  sampler.start();
  const ResourceSummary summary = sampler.stop();
  EXPECT_TRUE(summary.samples.empty());
  EXPECT_GE(summary.duration_s, 0.0);
  EXPECT_LT(summary.duration_s, 5.0);  // stop() woke the thread instead of waiting a period
  EXPECT_GT(summary.peak_rss_mb, 0.0);
  EXPECT_GT(summary.mean_rss_mb, 0.0);
  EXPECT_TRUE(std::isfinite(summary.mean_process_cpu_percent));
  EXPECT_NO_THROW((void)to_json(summary).dump());
}

TEST(ResourceSampler, StopWithoutStartReportsWhy) {
  ResourceSampler sampler;
  const ResourceSummary summary = sampler.stop();
  EXPECT_FALSE(summary.energy.available);
  EXPECT_FALSE(summary.energy.source.empty());
  EXPECT_FALSE(summary.gpu.available);
}

TEST(ResourceSampler, CanMeasureASecondSpan) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  (void)sampler.stop();
  sampler.start();
  busy_for(std::chrono::milliseconds(120));
  const ResourceSummary second = sampler.stop();
  EXPECT_GE(second.samples.size(), 1U);
  EXPECT_LT(second.duration_s, 5.0);
}

TEST(ResourceSampler, DestructorWithoutStopJoinsCleanly) {
  const auto started = Clock::now();
  {
    ResourceSampler sampler(10.0);
    sampler.start();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 5.0);
}

TEST(ResourceSampler, EnergyIsMeasuredOrExplained) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  busy_for(std::chrono::milliseconds(200));
  const ResourceSummary summary = sampler.stop();
  const nlohmann::json energy = to_json(summary).at("energy");

  EXPECT_FALSE(summary.energy.source.empty());
  EXPECT_EQ(energy.at("available"), summary.energy.available);
  EXPECT_EQ(energy.at("source"), summary.energy.source);
  if (summary.energy.available) {
    EXPECT_GT(summary.energy.joules, 0.0);
    EXPECT_GT(energy.at("joules").get<double>(), 0.0);
    ASSERT_TRUE(inferences_per_joule(summary.energy, 100.0).has_value());
    EXPECT_GT(*inferences_per_joule(summary.energy, 100.0), 0.0);
  } else {
    EXPECT_TRUE(energy.at("joules").is_null());  // unknown, never reported as zero
    EXPECT_FALSE(inferences_per_joule(summary.energy, 100.0).has_value());
  }
}

TEST(ResourceSampler, GpuIsMeasuredOrExplained) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const ResourceSummary summary = sampler.stop();
  const nlohmann::json gpu = to_json(summary).at("gpu");

  EXPECT_EQ(gpu.at("available"), summary.gpu.available);
  if (summary.gpu.available) {
    EXPECT_GE(summary.gpu.peak_memory_mb, 0.0);
    EXPECT_TRUE(gpu.at("peak_memory_mb").is_number());
  } else {
    EXPECT_FALSE(summary.gpu.reason.empty());
    EXPECT_EQ(gpu.at("reason"), summary.gpu.reason);
    EXPECT_TRUE(gpu.at("peak_memory_mb").is_null());
    EXPECT_TRUE(gpu.at("mean_power_w").is_null());
  }
}

TEST(ResourceSampler, NoDriverReasonNamesTheLibrary) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  const ResourceSummary summary = sampler.stop();
  if (summary.gpu.available) GTEST_SKIP() << "an NVIDIA driver is present";
  if (summary.gpu.reason.find("libnvidia-ml.so.1") == std::string::npos) {
    GTEST_SKIP() << "driver library present but unusable: " << summary.gpu.reason;
  }
  EXPECT_EQ(summary.gpu.reason, "no NVIDIA driver (libnvidia-ml.so.1 not found)");
}

TEST(ResourceSampler, JsonHasEveryField) {
  ResourceSampler sampler(kPeriodS);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const ResourceSummary summary = sampler.stop();
  const nlohmann::json json = to_json(summary);

  for (const char* key : {"duration_s", "peak_rss_mb", "mean_rss_mb", "process_cpu_seconds", "mean_process_cpu_percent",
                          "mean_system_cpu_percent", "voluntary_context_switches", "involuntary_context_switches",
                          "minor_page_faults", "major_page_faults", "energy", "gpu", "samples"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json.at("peak_rss_mb"), summary.peak_rss_mb);
  EXPECT_EQ(json.at("minor_page_faults"), summary.minor_page_faults);
  ASSERT_TRUE(json.at("samples").is_array());
  ASSERT_EQ(json.at("samples").size(), summary.samples.size());
  for (const nlohmann::json& sample : json.at("samples")) {
    for (const char* key : {"t_s", "rss_mb", "process_cpu_percent", "system_cpu_percent"}) {
      EXPECT_TRUE(sample.contains(key)) << key;
    }
  }
  EXPECT_NO_THROW((void)json.dump());
}

TEST(InferencesPerJoule, DividesOnlyWhenEnergyIsKnown) {
  EXPECT_DOUBLE_EQ(*inferences_per_joule({true, "rapl:package-0", 4.0}, 100.0), 25.0);
  EXPECT_FALSE(inferences_per_joule({true, "rapl:package-0", 0.0}, 100.0).has_value());
  EXPECT_FALSE(inferences_per_joule({false, "RAPL not readable", 4.0}, 100.0).has_value());
}

// ---- Energy: the cell's device only, over its measured phases only -------------------------

namespace fs = std::filesystem;

// A powercap tree with one package zone whose counter the test (or a fake system) advances.
class FakePowercap {
 public:
  explicit FakePowercap(const std::string& name) : root_(fs::temp_directory_path() / ("infermark_energy_" + name)) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "intel-rapl:0");
    std::ofstream(root_ / "intel-rapl:0/name") << "package-0\n";
    std::ofstream(root_ / "intel-rapl:0/max_energy_range_uj") << "262143328850\n";
    add_uj(0);
  }
  ~FakePowercap() { fs::remove_all(root_); }
  FakePowercap(const FakePowercap&) = delete;
  FakePowercap& operator=(const FakePowercap&) = delete;

  void add_uj(std::uint64_t uj) {
    const std::lock_guard lock(mutex_);
    uj_ += uj;
    // Renamed into place, so the sampler never reads half a write.
    std::ofstream(root_ / "intel-rapl:0/energy_uj.next") << uj_ << "\n";
    fs::rename(root_ / "intel-rapl:0/energy_uj.next", root_ / "intel-rapl:0/energy_uj");
  }
  EnergyTarget target() const {
    EnergyTarget target;
    target.powercap_root = root_;
    return target;
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
  std::mutex mutex_;
  std::uint64_t uj_ = 0;
};

// A GPU-like counter that is always readable: what a CPU cell must not take its energy from.
class FakeGpuCounter final : public EnergyCounter {
 public:
  void start() override {}
  void update() override { joules_ += 1.0; }
  bool available() const override { return true; }
  std::string source() const override { return "fake-nvml:gpu"; }
  double joules() const override { return joules_; }

 private:
  double joules_ = 0.0;
};

TEST(EnergyWindows, JoulesWithinWindowsAreInterpolatedBetweenMarks) {
  const std::vector<EnergyMark> marks{{0, 0.0}, {100, 10.0}, {200, 30.0}};
  EXPECT_DOUBLE_EQ(joules_within(marks, {{0, 100}}), 10.0);
  EXPECT_DOUBLE_EQ(joules_within(marks, {{50, 150}}), 15.0);            // 5 + 10
  EXPECT_DOUBLE_EQ(joules_within(marks, {{0, 50}, {150, 200}}), 15.0);  // two windows, the middle left out
  EXPECT_DOUBLE_EQ(joules_within(marks, {{-100, 300}}), 30.0);          // edges outside take the nearest mark
  EXPECT_DOUBLE_EQ(joules_within(marks, {{120, 120}}), 0.0);
  EXPECT_DOUBLE_EQ(seconds_within({{0, 500'000'000}, {2'000'000'000, 3'000'000'000}}), 1.5);
}

TEST(ResourceSampler, EnergyCountsOnlyTheMeasuredWindow) {
  FakePowercap powercap("window");
  ResourceSampler sampler(kPeriodS, powercap.target());
  sampler.start();
  powercap.add_uj(5'000'000);  // warm-up: 5 J
  sampler.mark();
  const auto begin_ns = mono_now_ns();
  sampler.mark();              // the counter is 5 J on both sides of the edge
  powercap.add_uj(2'000'000);  // measured: 2 J
  sampler.mark();
  const auto end_ns = mono_now_ns();
  sampler.mark();
  powercap.add_uj(7'000'000);  // after it: 7 J
  const ResourceSummary summary = sampler.stop({{begin_ns, end_ns}});
  ASSERT_TRUE(summary.energy.available) << summary.energy.source;
  EXPECT_NEAR(summary.energy.joules, 2.0, 1e-9);
  EXPECT_NEAR(summary.energy.seconds, static_cast<double>(end_ns - begin_ns) * 1e-9, 1e-12);
  EXPECT_EQ(summary.energy.source, "rapl:package-0");
  EXPECT_EQ(summary.energy.device, "cpu");
}

TEST(ResourceSampler, StopWithoutWindowsCountsTheWholeSpan) {
  FakePowercap powercap("span");
  ResourceSampler sampler(kPeriodS, powercap.target());
  sampler.start();
  powercap.add_uj(3'000'000);
  const ResourceSummary summary = sampler.stop();
  ASSERT_TRUE(summary.energy.available) << summary.energy.source;
  EXPECT_NEAR(summary.energy.joules, 3.0, 1e-9);
  EXPECT_GT(summary.energy.seconds, 0.0);  // from the first read of the counter to the last
  EXPECT_LE(summary.energy.seconds, summary.duration_s);
}

TEST(ResourceSampler, UnreadableRaplIsUnavailableThoughAGpuCounterReads) {
  FakePowercap powercap("unreadable");
  fs::remove(powercap.root() / "intel-rapl:0/energy_uj");
  fs::create_directories(powercap.root() / "intel-rapl:0/energy_uj");  // unreadable even for root
  auto target = powercap.target();
  bool gpu_opened = false;
  target.open_gpu_counter = [&gpu_opened](unsigned) {
    gpu_opened = true;
    return std::make_unique<FakeGpuCounter>();
  };
  ResourceSampler sampler(kPeriodS, target);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const ResourceSummary summary = sampler.stop();
  EXPECT_FALSE(summary.energy.available);
  EXPECT_EQ(summary.energy.source,
            "RAPL unreadable: " + (powercap.root() / "intel-rapl:0/energy_uj").string() + ": Is a directory");
  EXPECT_EQ(summary.energy.device, "cpu");
  EXPECT_TRUE(std::isnan(summary.energy.joules));
  EXPECT_FALSE(gpu_opened) << "a CPU cell's energy must not come from a GPU's counter";
  EXPECT_TRUE(to_json(summary).at("energy").at("joules").is_null());
}

TEST(ResourceSampler, GpuCellReadsItsGpuCounterNotRapl) {
  FakePowercap powercap("gpu_cell");
  auto target = energy_target_for_device("cuda:1");
  target.powercap_root = powercap.root();
  unsigned opened = 99;
  target.open_gpu_counter = [&opened](unsigned index) {
    opened = index;
    return std::make_unique<FakeGpuCounter>();
  };
  ResourceSampler sampler(kPeriodS, target);
  sampler.start();
  powercap.add_uj(50'000'000);  // the CPU's energy: not this cell's
  const ResourceSummary summary = sampler.stop();
  ASSERT_TRUE(summary.energy.available);
  EXPECT_EQ(opened, 1u);
  EXPECT_EQ(summary.energy.source, "fake-nvml:gpu");
  EXPECT_EQ(summary.energy.device, "gpu1");
  EXPECT_LT(summary.energy.joules, 50.0);
}

TEST(EnergyTarget, DeviceNamesMapToTheirOwnCounter) {
  EXPECT_EQ(energy_target_for_device("cpu").device, EnergyDevice::kCpu);
  EXPECT_EQ(energy_target_for_device("CPU").device, EnergyDevice::kCpu);
  for (const auto& [name, index] :
       std::vector<std::pair<std::string, unsigned>>{{"cuda", 0}, {"cuda:1", 1}, {"gpu", 0}, {"GPU.2", 2}, {"gpu:3", 3}}) {
    const auto target = energy_target_for_device(name);
    EXPECT_EQ(target.device, EnergyDevice::kNvidiaGpu) << name;
    EXPECT_EQ(target.gpu_index, index) << name;
  }
  for (const std::string name : {"npu", "cudax", "gpu:", "gpu:1a"}) {
    const auto target = energy_target_for_device(name);
    EXPECT_EQ(target.device, EnergyDevice::kWithoutCounter) << name;
    const auto counter = open_energy_counter(target);
    counter->start();
    EXPECT_FALSE(counter->available());
    EXPECT_EQ(counter->source(), "no energy counter for device '" + name + "' here (RAPL reads the CPU, NVML NVIDIA GPUs)");
  }
}

TEST(EnergyTarget, AFrameworkThatRanOnTheCpuInsteadGetsTheCpusCounter) {
  SessionOptions options;
  options.device = "cuda";
  EXPECT_EQ(harness::energy_target_for(options, {}).device, EnergyDevice::kNvidiaGpu);
  const std::vector<EffectiveSetting> refused{
      {"execution_provider", "cuda", "CPUExecutionProvider", SettingState::kNotApplied, "only the CPU provider is built"}};
  EXPECT_EQ(harness::energy_target_for(options, refused).device, EnergyDevice::kCpu);
}

TEST(ResourceSummaryJson, EnergySpanAndDeviceRoundTripAndOlderFilesLoad) {
  ResourceSummary summary;
  summary.energy = {true, "rapl:package-0", 2.5, 0.5, "cpu"};
  const auto back = resource_summary_from(to_json(summary));
  EXPECT_DOUBLE_EQ(back.energy.joules, 2.5);
  EXPECT_DOUBLE_EQ(back.energy.seconds, 0.5);
  EXPECT_EQ(back.energy.device, "cpu");
  EXPECT_DOUBLE_EQ(*mean_watts(back.energy, 10.0), 5.0);  // over the joules' own span, not the sampled one

  const auto older = resource_summary_from(
      nlohmann::json::parse(R"({"duration_s": 4, "energy": {"available": true, "source": "rapl:package-0", "joules": 8}})"));
  EXPECT_TRUE(older.energy.available);
  EXPECT_DOUBLE_EQ(older.energy.joules, 8.0);
  EXPECT_TRUE(std::isnan(older.energy.seconds));
  EXPECT_EQ(older.energy.device, "");
  EXPECT_DOUBLE_EQ(*mean_watts(older.energy, older.duration_s), 2.0);
}

// A system whose every query uses 1 mJ of the fake package's energy: inferences/J is 1000 when
// only the measured queries' energy is counted, whatever ran before them. (An edge the sampler
// interpolates spreads a query's millijoule over the time between two reads: queries of 1 ms, far
// longer than the time from a phase's last completion to the read at stop(), keep that small.)
class MillijoulePerQuerySystem final : public loadgen::SystemUnderTest {
 public:
  explicit MillijoulePerQuerySystem(FakePowercap& powercap) : powercap_(powercap) {}
  int lanes() const override { return 1; }
  const loadgen::SampleLibrary& samples() const override { return single_; }
  void issue(int, const loadgen::Query&, loadgen::Completion&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    powercap_.add_uj(1000);
  }

 private:
  FakePowercap& powercap_;
  loadgen::SingleSample single_;
};

double inferences_per_joule_of(const loadgen::SampledRun& run) {
  double inferences = 0;
  for (const auto& phase : run.outcome.phases) inferences += static_cast<double>(phase.recorder.completed());
  EXPECT_TRUE(run.resources.energy.available) << run.resources.energy.source;
  return inferences_per_joule(run.resources.energy, inferences).value_or(0.0);
}

TEST(SampledRunEnergy, LongWarmUpGivesTheSameInferencesPerJoule) {
  FakePowercap powercap("warmup");
  MillijoulePerQuerySystem system(powercap);
  loadgen::ScenarioSpec spec;
  spec.max_queries = 300;
  spec.warmup_queries = 5;
  const auto short_warmup = loadgen::run_sampled(system, spec, 1, nullptr, powercap.target());
  spec.warmup_queries = 300;
  const auto long_warmup = loadgen::run_sampled(system, spec, 1, nullptr, powercap.target());
  // 5%: a loaded machine stretches the sleeps and delays the sampler's edge reads (2.2% seen under
  // the full suite), while counting the warm-up's energy too would give 500.
  EXPECT_NEAR(inferences_per_joule_of(short_warmup), 1000.0, 50.0);
  EXPECT_NEAR(inferences_per_joule_of(long_warmup), 1000.0, 50.0);
  // The span the joules cover is the measured phase's, which the inference count covers.
  EXPECT_NEAR(long_warmup.resources.energy.seconds, long_warmup.outcome.phases.at(0).duration_s, 1e-6);
}

TEST(SampledRunEnergy, SoakCapacityProbeIsNotCounted) {
  FakePowercap powercap("soak");
  MillijoulePerQuerySystem system(powercap);
  loadgen::ScenarioSpec spec;
  spec.name = loadgen::Scenario::kSoak;
  spec.warmup_queries = 5;
  spec.capacity_probe_s = 0.3;  // at full speed: more queries, more joules than the soak's
  spec.soak_share = 0.5;
  spec.soak_duration_s = 0.4;
  spec.soak_interval_s = 0.1;
  // Reads every 10 ms: the probe-to-soak edge is interpolated across at most that.
  const auto run = loadgen::run_sampled(system, spec, 1, nullptr, powercap.target(), 0.01);
  ASSERT_EQ(run.outcome.phases.size(), 1u);
  EXPECT_NEAR(inferences_per_joule_of(run), 1000.0, 100.0);
}

}  // namespace
}  // namespace infermark::probes

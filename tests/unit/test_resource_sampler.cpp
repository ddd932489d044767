#include "probes/memory.hpp"
#include "probes/resource_sampler.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <ctime>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

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

}  // namespace
}  // namespace infermark::probes

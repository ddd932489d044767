#include "probes/environment.hpp"
#include "probes/memory.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

namespace infermark::probes {
namespace {

TEST(Environment, CapturesBasicMachineFacts) {
  const Environment env = capture_environment();
  EXPECT_GE(env.logical_cores, 1);
  EXPECT_GE(env.physical_cores, 1);
  EXPECT_LE(env.physical_cores, env.logical_cores);
  EXPECT_GT(env.memory_total_mb, 0);
  EXPECT_LE(env.memory_available_mb, env.memory_total_mb);
  EXPECT_FALSE(env.kernel.empty());
  EXPECT_FALSE(env.cpu_model.empty());
  EXPECT_FALSE(env.governor.empty());
  EXPECT_FALSE(env.turbo.empty());
  EXPECT_FALSE(env.hypervisor.empty());
  EXPECT_FALSE(env.compiler.empty());
  EXPECT_FALSE(env.build_type.empty());
}

TEST(Environment, JsonHasEveryFieldUnderItsMemberName) {
  Environment env = capture_environment();
  env.libraries["onnxruntime"] = "1.17.0";
  const nlohmann::json json = to_json(env);
  for (const char* key : {"cpu_model", "cpu_vendor", "logical_cores", "physical_cores", "sockets", "cpu_flags_simd", "caches",
                          "governor", "turbo", "hypervisor", "memory_total_mb", "memory_available_mb", "kernel", "os", "hostname",
                          "compiler", "build_type", "libraries"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json.at("logical_cores"), env.logical_cores);
  EXPECT_EQ(json.at("memory_total_mb"), env.memory_total_mb);
  EXPECT_EQ(json.at("kernel"), env.kernel);
  EXPECT_TRUE(json.at("caches").is_object());
  EXPECT_EQ(json.at("libraries").at("onnxruntime"), "1.17.0");
  EXPECT_NO_THROW((void)json.dump());  // values from /proc are sanitised to valid text
}

TEST(ProcessMemory, ReadsResidentAndPeakSize) {
  const MemoryReading reading = read_process_memory();
  EXPECT_GT(reading.rss_mb, 0.0);
  EXPECT_GE(reading.peak_rss_mb, reading.rss_mb);
}

TEST(ProcessMemory, PeakFollowsLargeAllocationAndCanBeReset) {
  constexpr std::size_t kBlockBytes = 64UL << 20;
  constexpr double kMinimumRiseMb = 50.0;  // slack for pages that were already resident

  reset_peak_rss();  // start from the current RSS where the kernel allows it
  const MemoryReading before = read_process_memory();

  // mmap rather than new: the compiler cannot elide it, and munmap really returns the pages.
  void* block = ::mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, kBlockBytes);  // only touched pages become resident
  const MemoryReading during = read_process_memory();
  ::munmap(block, kBlockBytes);

  EXPECT_GE(during.peak_rss_mb - before.peak_rss_mb, kMinimumRiseMb);
  if (!reset_peak_rss()) GTEST_SKIP() << "kernel refused /proc/self/clear_refs";
  const MemoryReading after = read_process_memory();
  EXPECT_LT(after.peak_rss_mb, during.peak_rss_mb - kMinimumRiseMb);
}

}  // namespace
}  // namespace infermark::probes

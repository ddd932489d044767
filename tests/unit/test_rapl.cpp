// The RAPL reader on directory trees shaped like /sys/class/powercap: which zones are summed,
// counters that wrap between reads, files that cannot be read, and the source text it reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probes/rapl.hpp"

namespace {

namespace fs = std::filesystem;
using infermark::probes::find_rapl_zones;
using infermark::probes::RaplMeter;

class Rapl : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("infermark_rapl_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A zone directory with its name and counters; an empty `range` leaves max_energy_range_uj out.
  void zone(const std::string& id, const std::string& name, const std::string& energy_uj,
            const std::string& range = "262143328850") {
    fs::create_directories(root_ / id);
    write(id + "/name", name + "\n");
    if (!energy_uj.empty()) write(id + "/energy_uj", energy_uj + "\n");
    if (!range.empty()) write(id + "/max_energy_range_uj", range + "\n");
  }
  void write(const std::string& relative, const std::string& text) { std::ofstream(root_ / relative) << text; }
  void energy(const std::string& id, std::uint64_t uj) { write(id + "/energy_uj", std::to_string(uj) + "\n"); }

  // The usual two-socket server: packages with core, uncore and DRAM sub-domains.
  void two_sockets() {
    zone("intel-rapl:0", "package-0", "1000000");
    zone("intel-rapl:0:0", "core", "500000");
    zone("intel-rapl:0:1", "uncore", "100000");
    zone("intel-rapl:1", "package-1", "2000000");
    zone("intel-rapl:1:0", "core", "700000");
  }

  fs::path root_;
};

std::vector<std::string> ids(const std::vector<infermark::probes::RaplZone>& zones) {
  std::vector<std::string> out;
  for (const auto& z : zones) out.push_back(z.id);
  return out;
}

TEST_F(Rapl, PackagesAreSummedAndTheirCoreAndUncoreAreNot) {
  two_sockets();
  EXPECT_EQ(ids(find_rapl_zones(root_)), (std::vector<std::string>{"intel-rapl:0", "intel-rapl:1"}));
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 1'500'000);    // +0.5 J
  energy("intel-rapl:0:0", 1'400'000);  // inside package-0: must not add
  energy("intel-rapl:0:1", 1'100'000);
  energy("intel-rapl:1", 2'250'000);  // +0.25 J
  meter.update();
  ASSERT_TRUE(meter.available());
  EXPECT_DOUBLE_EQ(meter.joules(), 0.75);
  EXPECT_EQ(meter.source(), "rapl:package-0+rapl:package-1");
}

TEST_F(Rapl, DramIsOutsideThePackageCounterAndIsAdded) {
  zone("intel-rapl:0", "package-0", "1000");
  zone("intel-rapl:0:0", "dram", "5000");
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 3000);
  energy("intel-rapl:0:0", 6000);
  meter.update();
  EXPECT_DOUBLE_EQ(meter.joules(), 0.003);
  EXPECT_EQ(meter.source(), "rapl:package-0+rapl:package-0/dram");
}

TEST_F(Rapl, ZonesAreOrderedByNumberNotByText) {
  for (const int i : {10, 2, 0}) zone("intel-rapl:" + std::to_string(i), "package-" + std::to_string(i), "0");
  EXPECT_EQ(ids(find_rapl_zones(root_)), (std::vector<std::string>{"intel-rapl:0", "intel-rapl:2", "intel-rapl:10"}));
}

TEST_F(Rapl, PsysCoversThePackagesAndIsSummedOnlyAlone) {
  zone("intel-rapl:0", "package-0", "0");
  zone("intel-rapl:1", "psys", "0");
  EXPECT_EQ(ids(find_rapl_zones(root_)), std::vector<std::string>{"intel-rapl:0"});
  fs::remove_all(root_ / "intel-rapl:0");
  EXPECT_EQ(ids(find_rapl_zones(root_)), std::vector<std::string>{"intel-rapl:1"});
}

TEST_F(Rapl, MmioPackageIsTheSameCounterAndIsUsedOnlyWhenMsrLacksIt) {
  zone("intel-rapl:0", "package-0", "0");
  zone("intel-rapl-mmio:0", "package-0", "0");
  EXPECT_EQ(ids(find_rapl_zones(root_)), std::vector<std::string>{"intel-rapl:0"});
  fs::remove_all(root_ / "intel-rapl:0");
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl-mmio:0", 2'000'000);
  meter.update();
  EXPECT_DOUBLE_EQ(meter.joules(), 2.0);
  EXPECT_EQ(meter.source(), "rapl:mmio:package-0");
}

TEST_F(Rapl, WrapIsUndoneWithTheCounterRange) {
  zone("intel-rapl:0", "package-0", "990", "1000");
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 5);  // 10 uJ to the wrap, then 5
  meter.update();
  energy("intel-rapl:0", 20);
  meter.update();
  ASSERT_TRUE(meter.available());
  EXPECT_DOUBLE_EQ(meter.joules(), 30e-6);
  EXPECT_EQ(meter.source(), "rapl:package-0");
}

TEST_F(Rapl, WrapWithoutTheRangeMakesTheEnergyUnknownNotSmaller) {
  zone("intel-rapl:0", "package-0", "990", "");
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 995);
  meter.update();
  EXPECT_TRUE(meter.available());  // no wrap yet: the range is not needed
  energy("intel-rapl:0", 5);
  meter.update();
  energy("intel-rapl:0", 50);
  meter.update();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(),
            "RAPL counter intel-rapl:0 went back from 995 to 5 uJ and its max_energy_range_uj is unreadable: the span's "
            "energy is unknown");
}

TEST_F(Rapl, NoPowercapDirectory) {
  RaplMeter meter(root_ / "absent");
  meter.start();
  meter.update();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(), "RAPL unreadable: " + (root_ / "absent").string() + ": does not exist (no powercap driver)");
}

TEST_F(Rapl, PowercapWithoutRaplZones) {
  zone("dtpm", "dtpm", "0");
  zone("intel-rapl", "not a zone id", "0");
  zone("intel-rapl:x", "not a zone id", "0");
  RaplMeter meter(root_);
  meter.start();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(), "RAPL unreadable: " + root_.string() + ": no intel-rapl zones");
}

// Tests run as root, where chmod does not stop a read: these are the failures root still sees.
TEST_F(Rapl, EnergyFileThatIsADirectory) {
  zone("intel-rapl:0", "package-0", "");
  fs::create_directories(root_ / "intel-rapl:0/energy_uj");
  RaplMeter meter(root_);
  meter.start();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(), "RAPL unreadable: " + (root_ / "intel-rapl:0/energy_uj").string() + ": Is a directory");
}

TEST_F(Rapl, EnergyFileThatIsADanglingLink) {
  zone("intel-rapl:0", "package-0", "");
  fs::create_symlink(root_ / "nowhere", root_ / "intel-rapl:0/energy_uj");
  RaplMeter meter(root_);
  meter.start();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(), "RAPL unreadable: " + (root_ / "intel-rapl:0/energy_uj").string() + ": No such file or directory");
}

TEST_F(Rapl, EnergyFileWithGarbage) {
  zone("intel-rapl:0", "package-0", "12abc");
  RaplMeter meter(root_);
  meter.start();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.source(), "RAPL unreadable: " + (root_ / "intel-rapl:0/energy_uj").string() + ": not a number ('12abc')");
}

TEST_F(Rapl, AnUnreadablePackageIsLeftOutAndNamed) {
  zone("intel-rapl:0", "package-0", "1000000");
  zone("intel-rapl:1", "package-1", "");  // energy_uj missing
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 4'000'000);
  meter.update();
  ASSERT_TRUE(meter.available());
  EXPECT_DOUBLE_EQ(meter.joules(), 3.0);
  EXPECT_EQ(meter.source(), "rapl:package-0 (left out, unreadable: intel-rapl:1/energy_uj: No such file or directory)");
}

TEST_F(Rapl, AReadFailingMidSpanIsCaughtUpAtTheNextRead) {
  zone("intel-rapl:0", "package-0", "100");
  RaplMeter meter(root_);
  meter.start();
  write("intel-rapl:0/energy_uj", "garbage");
  meter.update();
  energy("intel-rapl:0", 400);
  meter.update();
  ASSERT_TRUE(meter.available());
  EXPECT_DOUBLE_EQ(meter.joules(), 300e-6);
}

TEST_F(Rapl, MissingNameFallsBackToTheDirectoryName) {
  fs::create_directories(root_ / "intel-rapl:0");
  energy("intel-rapl:0", 0);
  RaplMeter meter(root_);
  meter.start();
  EXPECT_EQ(meter.source(), "rapl:intel-rapl:0");
}

TEST_F(Rapl, StartTakesNewBaselines) {
  zone("intel-rapl:0", "package-0", "0");
  RaplMeter meter(root_);
  meter.start();
  energy("intel-rapl:0", 1'000'000);
  meter.update();
  EXPECT_DOUBLE_EQ(meter.joules(), 1.0);
  meter.start();
  energy("intel-rapl:0", 1'500'000);
  meter.update();
  EXPECT_DOUBLE_EQ(meter.joules(), 0.5);
}

}  // namespace

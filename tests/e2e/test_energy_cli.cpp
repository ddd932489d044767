// Energy as a user sees it: `infermark run` records the joules its measurement used and the
// tables show inferences/J where RAPL (or NVML) could be read; elsewhere the result says energy was
// not measured and why, and no table shows a zero for it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e/cli_test_support.hpp"
#include "probes/rapl.hpp"
#include "report/markdown_table.hpp"
#include "report/result_set.hpp"

namespace {

using namespace infermark::testing;

class EnergyCli : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_energy_"); }

  // Long enough for every RAPL counter to advance (they update about every millisecond).
  CommandResult run_tiny_cnn() {
    return infermark("run " + (kModels / "tiny_cnn.onnx").string() + " -b onnxruntime --warmup 5 --runs 400 --out " +
                     (dir_ / "results").string());
  }

  infermark::report::RunResult only_result() const { return only_loaded().result; }
  std::string only_result_path() const { return only_loaded().path; }

 private:
  infermark::report::LoadedResult only_loaded() const {
    const auto loaded = infermark::report::load_results({(dir_ / "results").string()});
    EXPECT_EQ(loaded.size(), 1u);
    return loaded.at(0);
  }
};

// What this machine's RAPL reader sees: its zones, or why there are none.
struct RaplHere {
  bool readable = false;
  std::string source;
};

RaplHere rapl_here() {
  infermark::probes::RaplMeter meter;
  meter.start();
  return {meter.available(), meter.source()};
}

}  // namespace

TEST_F(EnergyCli, RunRecordsEnergyAndTheTablesShowInferencesPerJoule) {
  const auto rapl = rapl_here();
  const auto r = run_tiny_cnn();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto result = only_result();
  ASSERT_TRUE(result.resources.has_value());
  const auto& energy = result.resources->summary.energy;
  const auto report = infermark("report " + (dir_ / "results").string());
  ASSERT_EQ(report.exit_code, 0) << report.err;

  if (!energy.available) {
    // Not measured: said so with the reason, never written or shown as a zero.
    EXPECT_FALSE(rapl.readable) << "RAPL reads here (" << rapl.source << ") but the run recorded no energy: " << energy.source;
    EXPECT_NE(energy.source.find(rapl.source), std::string::npos) << energy.source;
    EXPECT_TRUE(std::isnan(energy.joules));
    const auto file = nlohmann::json::parse(slurp(only_result_path()));
    EXPECT_TRUE(file.at("resources").at("energy").at("joules").is_null()) << file.at("resources").dump();
    EXPECT_TRUE(file.at("resources").at("inferences_per_joule").is_null()) << file.at("resources").dump();
    EXPECT_FALSE(result.resources->inferences_per_joule.has_value());
    for (const auto* out : {&r.out, &report.out}) {
      EXPECT_NE(out->find("inferences/J not measured here for 1 of 1 cells: " + energy.source), std::string::npos) << *out;
      EXPECT_EQ(out->find("| inferences/J"), std::string::npos) << *out;  // no column of dashes
    }
    GTEST_SKIP() << "no energy counter readable on this machine: " << energy.source;
  }

  if (rapl.readable) {
    EXPECT_EQ(energy.source, rapl.source);  // the zones this machine's reader sums, RAPL before NVML
  }
  EXPECT_GT(energy.joules, 0.0);
  EXPECT_TRUE(std::isfinite(energy.joules));
  ASSERT_TRUE(result.resources->inferences_per_joule.has_value());
  const double per_joule = *result.resources->inferences_per_joule;
  EXPECT_TRUE(std::isfinite(per_joule));
  EXPECT_GT(per_joule, 0.0);
  EXPECT_DOUBLE_EQ(per_joule, result.resources->inferences / energy.joules);
  const auto shown = infermark::report::format_number(per_joule);
  for (const auto* out : {&r.out, &report.out}) {
    EXPECT_NE(out->find("inferences/J"), std::string::npos) << *out;
    EXPECT_NE(out->find(" " + shown + " |"), std::string::npos) << shown << "\n" << *out;
    EXPECT_EQ(out->find("not measured here"), std::string::npos) << *out;
  }
}

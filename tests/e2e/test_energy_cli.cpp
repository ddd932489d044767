// Energy as a user sees it: `infermark run` records the joules its measured phases used, read from
// the device the cell ran on (RAPL for these CPU cells, never a GPU's counter), and the tables show
// inferences/J; where RAPL cannot be read the result says energy was not measured and why, and no
// table shows a zero for it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/markdown_table.hpp"
#include "e2e/cli_test_support.hpp"
#include "probes/rapl.hpp"
#include "report/result_set.hpp"

namespace {

using namespace infermark::testing;

class EnergyCli : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_energy_"); }

  // Long enough for every RAPL counter to advance (they update about every millisecond) and for the
  // sampler's 0.1 s readings to bracket the measured phase several times over.
  CommandResult run_tiny_cnn(const std::string& warmup = "--warmup 5", const std::string& runs = "--runs 400 --min-duration 0.5",
                             const std::string& out = "results") {
    return infermark("run " + (kModels / "tiny_cnn.onnx").string() + " -b onnxruntime " + warmup + " " + runs + " --out " +
                     (dir_ / out).string());
  }

  infermark::result::RunResult only_result(const std::string& out = "results") const { return only_loaded(out).result; }
  std::string only_result_path() const { return only_loaded("results").path; }

 private:
  infermark::report::LoadedResult only_loaded(const std::string& out) const {
    const auto loaded = infermark::report::load_results({(dir_ / out).string()});
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
    // RAPL's own reason: a CPU cell never takes a GPU's counter instead.
    EXPECT_EQ(energy.source, rapl.source);
    EXPECT_EQ(energy.device, "cpu");
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

  EXPECT_TRUE(rapl.readable) << "a CPU cell measured energy without RAPL: " << energy.source;
  EXPECT_EQ(energy.source, rapl.source);  // the zones this machine's reader sums, and nothing else
  EXPECT_EQ(energy.device, "cpu");
  EXPECT_GT(energy.seconds, 0.0);
  EXPECT_LE(energy.seconds, result.resources->summary.duration_s);  // the measured phase, not the whole span
  EXPECT_GT(energy.joules, 0.0);
  EXPECT_TRUE(std::isfinite(energy.joules));
  ASSERT_TRUE(result.resources->inferences_per_joule.has_value());
  const double per_joule = *result.resources->inferences_per_joule;
  EXPECT_TRUE(std::isfinite(per_joule));
  EXPECT_GT(per_joule, 0.0);
  EXPECT_DOUBLE_EQ(per_joule, result.resources->inferences / energy.joules);
  const auto shown = infermark::format_number(per_joule);
  for (const auto* out : {&r.out, &report.out}) {
    EXPECT_NE(out->find("inferences/J"), std::string::npos) << *out;
    EXPECT_NE(out->find(" " + shown + " |"), std::string::npos) << shown << "\n" << *out;
    EXPECT_EQ(out->find("not measured here"), std::string::npos) << *out;
  }
}

// A long warm-up uses energy too, but the inference count covers only the measured phase: counted
// over that phase alone, the joules give the same inferences/J after 5 warm-up queries as after
// 4 s of warm-up (4 times the measured phase: counted over the whole span, about 5x lower). The
// phase lasts 1 s so that a counter read late at either end (a loaded machine) moves the mean
// power by a small share of it.
TEST_F(EnergyCli, LongWarmUpGivesTheSameInferencesPerJoule) {
  if (!rapl_here().readable) GTEST_SKIP() << "no RAPL here: " << rapl_here().source;
  const std::string measured = "--runs 0 --min-duration 1 --max-duration 1";
  const auto short_run = run_tiny_cnn("--warmup 5", measured, "short");
  ASSERT_EQ(short_run.exit_code, 0) << short_run.out << short_run.err;
  const auto long_run = run_tiny_cnn("--warmup 5 --warmup-s 4", measured, "long");
  ASSERT_EQ(long_run.exit_code, 0) << long_run.out << long_run.err;
  const auto short_result = only_result("short"), long_result = only_result("long");
  ASSERT_TRUE(short_result.resources && long_result.resources);
  const auto &short_energy = short_result.resources->summary.energy, &long_energy = long_result.resources->summary.energy;
  ASSERT_TRUE(short_energy.available && long_energy.available) << short_energy.source << " / " << long_energy.source;
  ASSERT_TRUE(short_result.resources->inferences_per_joule && long_result.resources->inferences_per_joule);

  // The joules' span is the measured phase's, whatever the warm-up.
  EXPECT_NEAR(long_energy.seconds, long_result.throughput.wall_s, 1e-3);
  EXPECT_LT(long_energy.seconds, 0.5 * long_result.resources->summary.duration_s);
  // Mean power over the measured phase (joules / the phase's wall time) agrees within the noise of
  // the fake counters; counted over the whole span it was 5x higher after the long warm-up.
  const double power_ratio =
      (long_energy.joules / long_result.throughput.wall_s) / (short_energy.joules / short_result.throughput.wall_s);
  EXPECT_GT(power_ratio, 0.6) << "joules per measured second: long warm-up / short";
  EXPECT_LT(power_ratio, 1.67) << "joules per measured second: long warm-up / short; the warm-up's joules counted?";
  // inferences/J is that power over the throughput, which two runs on a shared machine may differ
  // in by 2x: a loose bound, still far from the 5x the warm-up's joules made.
  const double ratio = *long_result.resources->inferences_per_joule / *short_result.resources->inferences_per_joule;
  EXPECT_GT(ratio, 0.33) << "long warm-up's joules counted against the measured inferences?";
  EXPECT_LT(ratio, 3.0);
}

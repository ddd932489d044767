// `infermark sweep`: study files, matrix expansion, resuming, and bad study files.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e/cli_test_support.hpp"
#include "report/result_set.hpp"

namespace {

using namespace infermark::testing;

class Sweep : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_sweep_"); }

  fs::path study(const std::string& text) {
    const auto path = dir_ / "study.yaml";
    std::ofstream(path) << text;
    return path;
  }
  std::string small_study() const {
    return "name: small\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
           "]\nbackends: [onnxruntime]\nbase:\n  runs: 20\n  warmup: 2\naxes:\n  threads: [1, 2]\n  batch: [1, 2]\n";
  }
};

}  // namespace

TEST_F(Sweep, RunsEveryCellWritesASummaryAndResumes) {
  const auto file = study(small_study());
  const auto out = dir_ / "results";
  auto r = infermark("sweep " + file.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto folder = out / "study-small";
  auto results = infermark::report::load_results({folder.string()});
  ASSERT_EQ(results.size(), 4u);
  for (const auto& c : results) EXPECT_EQ(c.result.status, "ok") << c.result.error;
  EXPECT_TRUE(fs::exists(folder / "summary.md"));
  EXPECT_NE(r.out.find("Highest throughput per backend"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule of thumb"), std::string::npos) << r.out;

  // A second run resumes: nothing is measured again.
  // A measurement's samples identify it: a re-measured cell has different ones.
  std::map<std::string, std::vector<double>> samples;
  for (const auto& c : results) samples[c.path] = c.result.samples_ms;
  fs::remove(folder / results[0].path.substr(results[0].path.rfind('/') + 1));  // as if that cell never finished
  r = infermark("sweep " + file.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  results = infermark::report::load_results({folder.string()});
  ASSERT_EQ(results.size(), 4u);
  int remeasured = 0;
  for (const auto& c : results) remeasured += samples[c.path] != c.result.samples_ms;
  EXPECT_LE(remeasured, 1);  // only the removed cell
}

TEST_F(Sweep, DryRunListsTheMatrixAndRunsNothing) {
  const auto r = infermark("sweep " + study(small_study()).string() + " --dry-run --out " + (dir_ / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 cells"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads=2, batch=2"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

TEST_F(Sweep, BadStudiesFailBeforeAnythingRuns) {
  const auto model = (kModels / "tiny_cnn.onnx").string();
  auto r = infermark("sweep " + study("name: x\nmodels: [" + model + "]\naxes:\n  threads: [1, 2\n").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("study.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("YAML syntax error"), std::string::npos) << r.err;

  r = infermark("sweep " + study("name: x\nmodels: [" + model + "]\naxes:\n  wibble: [1, 2]\n").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("wibble"), std::string::npos) << r.err;

  r = infermark("sweep " + study("name: x\nmodels: [" + model + "]\naxes:\n  batch: [1, 0]\n").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--batch: 0 must be above 0"), std::string::npos) << r.err;

  r = infermark("sweep " + study(small_study()).string() + " --max-duration 10");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("more than --max-duration"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fs::path("results") / "study-small"));
}

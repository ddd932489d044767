// `infermark sweep`: study files, matrix expansion, resuming, and bad study files.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <regex>

#include "e2e/cli_test_support.hpp"
#include "report/result_set.hpp"
#include "study/config_search.hpp"

namespace {

using namespace infermark::testing;
namespace study = infermark::study;

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
  for (const auto& c : results) EXPECT_EQ(c.result.status, infermark::result::CellStatus::kOk) << c.result.error;
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

TEST_F(Sweep, SigtermMidSweepKeepsFinishedCellsAndTheResumeCompletes) {
  // Four cells of about 2.5 s each; SIGTERM after 4 s lands in the second. `timeout` sends it to
  // infermark and then to its process group: one request to stop, not a second "stop now".
  const auto file = study("name: stopped\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                          "]\nbackends: [onnxruntime]\nbase:\n  scenario: server\n  qps: 100\n  duration: 2\n"
                          "  warmup: 2\naxes:\n  threads: [1, 2, 3, 4]\n");
  const auto out = dir_ / "results";
  const auto folder = out / "study-stopped";
  auto r = infermark("sweep " + file.string() + " --out " + out.string(), "timeout --preserve-status -s TERM 4");
  ASSERT_EQ(r.exit_code, 130) << r.out << r.err;
  EXPECT_NE(r.err.find("rerun the same command to resume"), std::string::npos) << r.err;
  std::map<std::string, std::vector<double>> finished;  // ok cells of the stopped sweep, by file
  for (const auto& c : infermark::report::load_results({folder.string()})) {
    EXPECT_TRUE(c.result.status == infermark::result::CellStatus::kOk ||
                c.result.status == infermark::result::CellStatus::kInterrupted)
        << c.path << ": " << c.result.error;
    if (c.result.status == infermark::result::CellStatus::kOk) finished[c.path] = c.result.samples_ms;
  }

  r = infermark("sweep " + file.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto results = infermark::report::load_results({folder.string()});
  ASSERT_EQ(results.size(), 4u);
  for (const auto& c : results) {
    EXPECT_EQ(c.result.status, infermark::result::CellStatus::kOk) << c.path << ": " << c.result.error;
    if (finished.count(c.path)) {
      EXPECT_EQ(finished[c.path], c.result.samples_ms) << c.path << " was measured again";
    }
  }
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

// The guided search on a real backend and model, then the full matrix in the same folder: the
// search's measurements are resumed, so both answers come from the same numbers. Replaying those
// numbers through the search and the exhaustive walk in process checks that the CLI walked the
// grid the documented way. Real timings are noisy, so the measured landscape may have more than one
// peak, where a local search may stop short of the exhaustive answer: then the chosen cell must
// still beat every neighbour (the search's own guarantee). Agreement on landscapes with one peak is
// checked exhaustively in test_config_search.cpp.
TEST_F(Sweep, SearchAgreesWithTheFullMatrixAndRunsFewerCells) {
  const std::vector<int> batches{1, 2, 4, 8, 16, 32, 64}, threads{1, 2};
  const auto file = study("name: search\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                          "]\nbackends: [onnxruntime]\nbase:\n  runs: 60\n  warmup: 3\naxes:\n  batch: [1, 2, 4, 8, 16, 32, 64]\n"
                          "  threads: [1, 2]\n");
  const auto out = dir_ / "results";
  const auto folder = out / "study-search";
  auto r = infermark("sweep " + file.string() + " --search --p99-ms 1000 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch ran, chosen;
  ASSERT_TRUE(std::regex_search(r.out, ran, std::regex("Ran (\\d+) of the 14 cells"))) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, chosen, std::regex("\\*\\*Chosen: (\\S+)\\*\\*"))) << r.out;
  const auto cells_run = std::stoul(ran[1]);
  const std::string chosen_stem = chosen[1];  // the matches point into r.out, which is reused below
  EXPECT_LT(cells_run, 14u);
  EXPECT_EQ(infermark::report::load_results({folder.string()}).size(), cells_run);
  EXPECT_TRUE(fs::exists(folder / "summary.md"));

  // Searching again measures nothing new.
  r = infermark("sweep " + file.string() + " --search --p99-ms 1000 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("**Chosen: " + chosen_stem + "**"), std::string::npos) << r.out;

  r = infermark("sweep " + file.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<std::string, study::PointScore> measured;
  for (const auto& c : infermark::report::load_results({folder.string()})) {
    ASSERT_EQ(c.result.status, infermark::result::CellStatus::kOk) << c.result.error;
    measured[fs::path(c.path).stem().string()] = {true, c.result.throughput.inferences_per_s, c.result.latency_ms->at(99).value};
  }
  ASSERT_EQ(measured.size(), 14u);
  const std::vector<study::SearchAxis> axes{{batches.size(), true}, {threads.size(), true}};
  const auto stem = [&](const study::GridPoint& p) {
    return "tiny_cnn.onnxruntime.batch-" + std::to_string(batches[p[0]]) + ".threads-" + std::to_string(threads[p[1]]);
  };
  const auto replay = [&](const study::GridPoint& p) { return measured.at(stem(p)); };

  const auto guided = study::guided_search(axes, 1000, replay);
  ASSERT_TRUE(guided.best);
  EXPECT_EQ(stem(*guided.best), chosen_stem) << r.out;
  EXPECT_EQ(guided.evaluated.size(), cells_run);
  const auto exhaustive = study::exhaustive_search(axes, 1000, replay);
  ASSERT_TRUE(exhaustive.best);
  if (*exhaustive.best == *guided.best) return;

  const auto best = measured.at(chosen_stem).throughput;
  for (int db = -1; db <= 1; ++db)
    for (int dt = -1; dt <= 1; ++dt) {
      const auto b = static_cast<long>(guided.best->at(0)) + db, t = static_cast<long>(guided.best->at(1)) + dt;
      if (b < 0 || t < 0 || b >= static_cast<long>(batches.size()) || t >= static_cast<long>(threads.size())) continue;
      const study::GridPoint neighbour{static_cast<std::size_t>(b), static_cast<std::size_t>(t)};
      EXPECT_LE(replay(neighbour).throughput, best) << stem(neighbour) << " beats the chosen " << chosen_stem;
    }
  std::cout << "the measured landscape has more than one peak: the search chose " << chosen_stem << ", the full matrix "
            << stem(*exhaustive.best) << "\n";
}

TEST_F(Sweep, SearchSaysWhenNoCellMeetsTheTarget) {
  const auto file = study("name: impossible\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                          "]\nbackends: [onnxruntime]\nbase:\n  runs: 10\naxes:\n  batch: [1, 2, 4]\n");
  auto r = infermark("sweep " + file.string() + " --search --p99-ms 0.000001 --out " + (dir_ / "results").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("No cell it ran meets the target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cells that missed the target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_cnn.onnxruntime.batch-1: P99"), std::string::npos) << r.out;

  r = infermark("sweep " + file.string() + " --search --out " + (dir_ / "results").string());
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("--p99-ms"), std::string::npos) << r.err;
}

// Fixed against varying shapes on a model with dynamic height and width: each varying cell records
// the shapes it fed, and the summary gives the slowdown against the fixed cell.
TEST_F(Sweep, DynamicShapesStudyReportsTheCliff) {
  const auto file = study("name: shapes\nmodels: [" + (kModels / "tiny_cnn_dynamic_hw.onnx").string() +
                          "]\nbackends: [onnxruntime]\nbase:\n  runs: 40\n  warmup: 2\n  shape-sets: 8\naxes:\n"
                          "  shape-range: [input=1x3x32x32, input=1x3x24-40x24-40, input=1x3x24-40/8x24-40/8]\n");
  const auto out = dir_ / "results";
  const auto r = infermark("sweep " + file.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto results = infermark::report::load_results({(out / "study-shapes").string()});
  ASSERT_EQ(results.size(), 3u);
  int varying = 0;
  for (const auto& c : results) {
    ASSERT_EQ(c.result.status, infermark::result::CellStatus::kOk) << c.result.error;
    if (!c.result.scenario.parameters.varying_shapes) {
      EXPECT_EQ(c.result.scenario.inputs.at(0).shape, (std::vector<std::int64_t>{1, 3, 32, 32}));
      continue;
    }
    ++varying;
    const auto& shapes = *c.result.scenario.parameters.varying_shapes;
    EXPECT_EQ(shapes.input_sets, 8u);
    EXPECT_EQ(shapes.sets.size(), shapes.distinct_shapes.value_or(0));  // one row per shape, with its latency
    std::uint64_t queries = 0;
    for (const auto& row : shapes.sets) queries += row.queries;
    EXPECT_EQ(queries, 40u);
  }
  EXPECT_EQ(varying, 2);
  EXPECT_NE(r.out.find("Varying shapes against a fixed shape"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input=1x3x24-40/8x24-40/8"), std::string::npos) << r.out;
  // Both compared with the fixed cell: "not measured" only where the machine has no energy counter.
  EXPECT_EQ(std::regex_replace(r.out, std::regex("inferences/J not measured here"), "").find("not measured"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("peak MB fixed -> varying"), std::string::npos) << r.out;
  // Latency per shape, each shape's cost per element against the fixed cell's, and the costliest.
  EXPECT_NE(r.out.find("### Latency by shape"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost per element vs fixed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("P50 vs size trend"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Slowest shape for its size: input=1x3x"), std::string::npos) << r.out;
  // The report's shape axis names a varying cell by its ranges, not by the first shape it drew.
  EXPECT_NE(r.out.find("1x3x24-40/8x24-40/8 (drawn per query)"), std::string::npos) << r.out;
}

TEST_F(Sweep, BadShapeRangesFailBeforeAnythingRuns) {
  const auto model = (kModels / "tiny_cnn_dynamic_hw.onnx").string();
  const auto r =
      infermark("sweep " + study("name: x\nmodels: [" + model + "]\naxes:\n  shape-range: [input=1x3x40-24x32]\n").string() +
                " --out " + (dir_ / "results").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shape-range input=1x3x40-24x32: range 40-24 runs backwards"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

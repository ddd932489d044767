// `infermark evaluate`: a suite of a study and a pipeline run into one folder with --quick's
// overrides, resumed, with evaluation.md and report.html ending in the decision; an experiment that
// cannot run is reported and the others go on; the shipped suite's quick form plans within budget.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "e2e/cli_test_support.hpp"
#include "report/result_set.hpp"

namespace {

using namespace infermark::testing;

class Evaluate : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_evaluate_"); }

  fs::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // A study of tiny_cnn (2 thread counts; --quick keeps 1), a two-stage pipeline, a skipped experiment.
  fs::path small_suite(const std::string& extra_experiment = "") {
    write("threads.yaml", "name: threads\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                              "]\nbackends: [onnxruntime]\nbase: {runs: 30, warmup: 2}\naxes:\n  threads: [1, 2]\n");
    write("split.yaml",
          "name: split\npipeline:\n  stages:\n    - {name: encoder, model: " + (kModels / "tiny_encoder.onnx").string() +
              ", backend: onnxruntime, threads: 1}\n" + "    - {name: head, model: " + (kModels / "tiny_head.onnx").string() +
              ", backend: onnxruntime, threads: 1}\nmodes: [serial, threads]\nrequests: 40\nwarmup: 2\n");
    return write("suite.yaml",
                 "name: small\ndescription: a tiny evaluation\ndecision: {p99-ms: 1000}\nexperiments:\n"
                 "  - title: Threads\n    study: threads.yaml\n    quick: {axes: {threads: [1]}, base: {runs: 12}}\n"
                 "  - title: Pipeline\n    study: split.yaml\n    quick: {requests: 10}\n"
                 "  - title: Left out\n    study: threads.yaml\n    quick: skip\n" +
                     extra_experiment);
  }
};

}  // namespace

TEST_F(Evaluate, QuickRunsEachExperimentsReducedFormResumesAndEndsInADecision) {
  const auto suite = small_suite();
  const auto out = dir_ / "results";
  auto r = infermark("evaluate " + suite.string() + " --quick --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto folder = out / "evaluation-small-quick";
  EXPECT_NE(r.out.find("[1/3] Threads: 1 cells; the time left is estimated once the first cells have run"), std::string::npos)
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\[2/3\] Pipeline: 2 modes; [0-9.]+ min elapsed, about [0-9]+ min left)")))
      << r.out;
  EXPECT_NE(r.out.find("left out of --quick"), std::string::npos) << r.out;

  // --quick's overrides ran: one thread count, 12 timed runs; the pipeline's modes at 10 requests.
  const auto study = infermark::report::load_results({(folder / "01-threads").string()});
  ASSERT_EQ(study.size(), 1u);
  EXPECT_EQ(study[0].result.status, infermark::result::CellStatus::kOk) << study[0].result.error;
  EXPECT_EQ(study[0].result.scenario.timed_runs, 12);
  const auto pipeline = infermark::report::load_results({(folder / "02-split").string()});
  ASSERT_EQ(pipeline.size(), 2u);
  for (const auto& mode : pipeline) EXPECT_EQ(mode.result.scenario.timed_runs, 10) << mode.path;
  EXPECT_FALSE(fs::exists(folder / "03-threads"));

  const auto markdown = slurp(folder / "evaluation.md");
  EXPECT_NE(markdown.find("# Evaluation: small (--quick)"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 1 | Threads |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 3 | Left out |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("skipped: left out of --quick"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("## 2. Pipeline"), std::string::npos) << markdown;
  const auto decision = markdown.find("## Decision");
  ASSERT_NE(decision, std::string::npos) << markdown;
  EXPECT_NE(markdown.find("Limits of the suite: P99 <= 1000 ms", decision), std::string::npos) << markdown;
  EXPECT_NE(r.out.find("evaluation.md and report.html"), std::string::npos) << r.out;
  const auto html = slurp(folder / "report.html");
  EXPECT_NE(html.find("\"evaluation\":"), std::string::npos);
  EXPECT_NE(html.find("\"title\":\"Pipeline\""), std::string::npos);

  // A second run resumes: the study's cell is not measured again, the finished pipeline is kept.
  r = infermark("evaluate " + suite.string() + " --quick --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto again = infermark::report::load_results({(folder / "01-threads").string()});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].result.samples_ms, study[0].result.samples_ms);
  EXPECT_NE(r.out.find("kept from an earlier run"), std::string::npos) << r.out;
}

TEST_F(Evaluate, AnExperimentThatCannotRunIsReportedAndTheOthersGoOn) {
  write("missing.yaml", "name: missing\nmodels: [" + (dir_ / "nowhere.onnx").string() + "]\nbackends: [onnxruntime]\n");
  const auto suite = small_suite("  - title: Missing model\n    study: missing.yaml\n");
  const auto out = dir_ / "results";
  const auto r = infermark("evaluate " + suite.string() + " --quick --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto folder = out / "evaluation-small-quick";
  const auto markdown = slurp(folder / "evaluation.md");
  EXPECT_NE(markdown.find("| 4 | Missing model | " + (dir_ / "missing.yaml").string() + " | 0 | skipped: model " +
                          (dir_ / "nowhere.onnx").string() + " not found |"),
            std::string::npos)
      << markdown;
  EXPECT_EQ(infermark::report::load_results({(folder / "01-threads").string()}).size(), 1u);
  EXPECT_TRUE(fs::exists(folder / "report.html"));
}

TEST_F(Evaluate, BadSuiteFilesAreRefusedNamingTheLine) {
  const auto suite = write("suite.yaml", "name: bad\nexperiments:\n  - title: A\n    study: a.yaml\n    quick: {runs: 3}\n");
  const auto r = infermark("evaluate " + suite.string() + " --out " + (dir_ / "results").string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(suite.string() + ":5:13: unknown key 'runs' in 'quick'"), std::string::npos) << r.err;
}

TEST_F(Evaluate, TheShippedSuitePlansEveryExperimentAndQuickLeavesOutOnlyWhatItSays) {
  // Run from the repository, as README says: the suite's model paths are relative to it.
  const auto repository = kModels.parent_path();
  const auto r =
      infermark("evaluate --quick --dry-run --out " + (dir_ / "results").string(), "cd " + repository.string() + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch count;
  ASSERT_TRUE(std::regex_search(r.out, count, std::regex(R"(evaluation framework \(--quick\): ([0-9]+) experiments)"))) << r.out;
  // Every experiment is planned, except the three --quick leaves out (CLIP and the two mixed-precision
  // experiments need zoo builds).
  std::size_t not_run = 0, pos = 0;
  while ((pos = r.out.find("not run: ", pos)) != std::string::npos) {
    ++not_run;
    EXPECT_EQ(r.out.compare(pos, 28, "not run: left out of --quick"), 0) << r.out;
    ++pos;
  }
  EXPECT_EQ(not_run, 3u) << r.out;
}

TEST_F(Evaluate, FrameworksThatCannotRunAModelAreLeftOutWithTheirReason) {
  const infermark::BackendRegistry registry{INFERMARK_PLUGIN_DIR};
  if (!registry.is_available("opencv")) GTEST_SKIP() << "opencv is not built in this configuration";
  // MiniLM's graph computes shapes at run time (a Shape node), which OpenCV DNN 4.6 cannot import.
  write("text.yaml", "name: text\nmodels: [" + (kModels / "minilm_l6.onnx").string() +
                         "]\nbackends: [onnxruntime, opencv]\nbase:\n  runs: 3\n  warmup: 1\n"
                         "  shape-range: input_ids=1x16,attention_mask=1x16,token_type_ids=1x16\n");
  const auto suite = write("suite.yaml", "name: text\nexperiments:\n  - {title: Text, study: text.yaml}\n");
  const auto out = dir_ / "results";
  const auto r = infermark("evaluate " + suite.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("left out: opencv cannot run " + (kModels / "minilm_l6.onnx").string() + ": opencv: cannot load"),
            std::string::npos)
      << r.out;
  const auto folder = out / "evaluation-text";
  const auto measured = infermark::report::load_results({(folder / "01-text").string()});
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].result.backend.name, "onnxruntime");
  const auto markdown = slurp(folder / "evaluation.md");
  EXPECT_NE(markdown.find("Left out, as `infermark check` found they cannot run here:"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- opencv cannot run"), std::string::npos) << markdown;
  // The answers are kept: the check of the pair that runs is not asked again on a rerun.
  EXPECT_TRUE(fs::exists(folder / "check" / "minilm_l6.onnx.onnxruntime.json"));
}

TEST_F(Evaluate, CheckNamesWhatRunsAndWhyTheOthersCannot) {
  const auto corrupt = dir_ / "corrupt.onnx";
  std::ofstream(corrupt) << "not an onnx model";
  const auto r = infermark("check " + (kModels / "tiny_cnn.onnx").string() + " " + corrupt.string() + " -b onnxruntime");
  EXPECT_EQ(r.exit_code, 1) << "the corrupt model runs nowhere\n" << r.out << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\\| " + (kModels / "tiny_cnn.onnx").string() + " +\\| onnxruntime +\\| [0-9.]+ +\\| runs ")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| " + corrupt.string() + " +\\| onnxruntime +\\| [^|]*\\| cannot load ")))
      << r.out;
  const auto ok = infermark("check " + (kModels / "tiny_cnn.onnx").string() + " -b onnxruntime");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST_F(Evaluate, StoppedMidwayKeepsWhatRanWritesTheReportAndTheRerunCompletes) {
  // Three cells of about 2.5 s; SIGTERM after 4 s lands in the second, before the second experiment.
  write("slow.yaml", "name: slow\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                         "]\nbackends: [onnxruntime]\nbase:\n  scenario: server\n  qps: 100\n  duration: 2\n  warmup: 2\n"
                         "axes:\n  threads: [1, 2, 3]\n");
  write("fast.yaml", "name: fast\nmodels: [" + (kModels / "tiny_cnn.onnx").string() +
                         "]\nbackends: [onnxruntime]\nbase: {runs: 10, warmup: 1}\n");
  const auto suite = write("suite.yaml",
                           "name: stop\nexperiments:\n  - {title: Slow, study: slow.yaml}\n"
                           "  - {title: Fast, study: fast.yaml}\n");
  const auto out = dir_ / "results";
  const auto folder = out / "evaluation-stop";
  auto r = infermark("evaluate " + suite.string() + " --out " + out.string(), "timeout --preserve-status -s TERM 4");
  ASSERT_EQ(r.exit_code, 130) << r.out << r.err;
  EXPECT_NE(r.err.find("rerun the same command to resume"), std::string::npos) << r.err;
  const auto markdown = slurp(folder / "evaluation.md");
  EXPECT_NE(
      markdown.find("| 2 | Fast | " + (dir_ / "fast.yaml").string() + " | 0 | skipped: the evaluation was stopped before it |"),
      std::string::npos)
      << markdown;
  std::size_t finished = 0;
  for (const auto& c : infermark::report::load_results({(folder / "01-slow").string()}))
    finished += c.result.status == infermark::result::CellStatus::kOk;
  EXPECT_GE(finished, 1u);

  r = infermark("evaluate " + suite.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto slow = infermark::report::load_results({(folder / "01-slow").string()});
  EXPECT_EQ(slow.size(), 3u);
  for (const auto& c : slow) EXPECT_EQ(c.result.status, infermark::result::CellStatus::kOk) << c.path;
  EXPECT_EQ(infermark::report::load_results({(folder / "02-fast").string()}).size(), 1u);
}

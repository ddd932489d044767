// Evaluation suites: YAML text -> experiments (files resolved against the suite's folder, zoo
// entries, --quick overrides), the overrides applied to a study, errors that point at the line,
// and the Markdown report's sections and decision.
#include "study/evaluation_suite.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "report/evaluation_report.hpp"
#include "study/study.hpp"
#include "synthetic_results.hpp"

namespace infermark::study {
namespace {

std::string suite_error(const std::string& yaml) {
  try {
    parse_evaluation_suite(yaml, "studies/evaluation/suite.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kSuite = R"(name: framework
description: all of it
decision: {p99-ms: 100, max-accuracy-loss: 2}
experiments:
  - title: Headline
    study: headline.yaml
    zoo: [resnet50]
    quick: {models: [m/small.onnx], base: {runs: 5}, axes: {threads: [1, 2]}}
  - title: Pipeline
    study: ../pipeline.yaml
    quick: {requests: 20}
  - title: CLIP
    study: clip.yaml
    quick: skip
)";

TEST(EvaluationSuite, ParsesExperimentsWithFilesBesideTheSuite) {
  const auto suite = parse_evaluation_suite(kSuite, "studies/evaluation/suite.yaml");
  EXPECT_EQ(suite.name, "framework");
  EXPECT_EQ(suite.description, "all of it");
  ASSERT_EQ(suite.experiments.size(), 3U);
  const auto& headline = suite.experiments[0];
  EXPECT_EQ(headline.title, "Headline");
  EXPECT_EQ(headline.file, std::filesystem::path("studies/evaluation/headline.yaml"));
  EXPECT_EQ(headline.zoo, std::vector<std::string>{"resnet50"});
  EXPECT_TRUE(headline.in_quick);
  ASSERT_TRUE(headline.quick.models.has_value());
  EXPECT_EQ(*headline.quick.models, std::vector<std::string>{"m/small.onnx"});
  EXPECT_EQ(headline.quick.base.at("runs"), "5");
  ASSERT_EQ(headline.quick.axes.size(), 1U);
  EXPECT_EQ(headline.quick.axes[0].values, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(suite.experiments[1].file, std::filesystem::path("studies/pipeline.yaml"));
  EXPECT_EQ(suite.experiments[1].quick.requests, 20);
  EXPECT_FALSE(suite.experiments[2].in_quick);
  EXPECT_EQ(suite.decision.p99_ms, 100);
  EXPECT_EQ(suite.decision.max_accuracy_loss_pct, 2);
  EXPECT_FALSE(suite.decision.min_qps.has_value());
}

TEST(EvaluationSuite, QuickOverridesReplaceModelsMergeBaseAndReplaceAxisValues) {
  const auto suite = parse_evaluation_suite(kSuite, "studies/evaluation/suite.yaml");
  const auto study = parse_study(R"(name: headline
models: [m/big.onnx, m/big.pt]
base: {runs: 100, warmup: 10}
axes: {threads: [1, 2, 4], batch: [1, 8]}
)",
                                 "studies/evaluation/headline.yaml");
  const auto quick = with_quick_overrides(study, suite.experiments[0]);
  EXPECT_EQ(quick.models, std::vector<std::string>{"m/small.onnx"});
  EXPECT_EQ(quick.base.at("runs"), "5");
  EXPECT_EQ(quick.base.at("warmup"), "10");  // kept
  ASSERT_EQ(quick.axes.size(), 2U);
  EXPECT_EQ(quick.axes[0].values, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(quick.axes[1].values, (std::vector<std::string>{"1", "8"}));  // not overridden
  EXPECT_EQ(expand(quick, {"onnxruntime"}).size(), 4U);
}

TEST(EvaluationSuite, AQuickAxisTheStudyLacksIsAnErrorAtItsLine) {
  const auto suite = parse_evaluation_suite(kSuite, "studies/evaluation/suite.yaml");
  const auto study = parse_study("name: h\nmodels: [m/a.onnx]\naxes: {batch: [1, 8]}\n", "studies/evaluation/headline.yaml");
  try {
    with_quick_overrides(study, suite.experiments[0]);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("studies/evaluation/suite.yaml:8:"), std::string::npos) << message;
    EXPECT_NE(message.find("quick axis 'threads' is not an axis of studies/evaluation/headline.yaml"), std::string::npos)
        << message;
  }
}

TEST(EvaluationSuite, ErrorsNameTheFileLineAndField) {
  EXPECT_NE(suite_error("name: x\n").find("'experiments' must list at least one"), std::string::npos);
  EXPECT_NE(suite_error("experiments:\n  - study: a.yaml\n").find("suite.yaml:2:5: the experiment has no 'title'"),
            std::string::npos)
      << suite_error("experiments:\n  - study: a.yaml\n");
  EXPECT_NE(suite_error("experiments:\n  - title: A\n").find("has no 'study'"), std::string::npos);
  EXPECT_NE(suite_error("experiments:\n  - {title: A, study: a.yaml, colour: red}\n").find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(suite_error("experiments:\n  - {title: A, study: a.yaml, quick: later}\n").find("'quick' is 'skip' or a mapping"),
            std::string::npos);
  EXPECT_NE(suite_error("experiments:\n  - {title: A, study: a.yaml, quick: {requests: -3}}\n")
                .find("quick 'requests' must be a positive count, not '-3'"),
            std::string::npos);
  EXPECT_NE(suite_error("decision: {p99-ms: fast}\nexperiments:\n  - {title: A, study: a.yaml}\n")
                .find("suite.yaml:1:20: decision 'p99-ms' must be a positive number, not 'fast'"),
            std::string::npos)
      << suite_error("decision: {p99-ms: fast}\nexperiments:\n  - {title: A, study: a.yaml}\n");
  EXPECT_NE(suite_error("decision: {latency: 3}\nexperiments:\n  - {title: A, study: a.yaml}\n")
                .find("unknown decision limit 'latency'"),
            std::string::npos);
  EXPECT_NE(suite_error("experiments: [\n").find("suite.yaml"), std::string::npos);
}

TEST(EvaluationReport, MarkdownHasASectionPerExperimentAndEndsInTheDecision) {
  std::vector<report::ExperimentSection> sections(2);
  sections[0].title = "Headline";
  sections[0].file = "studies/evaluation/headline.yaml";
  sections[0].summary_markdown = "# headline\n\n| backend | P99 |\n| --- | --: |\n| onnxruntime | 3 |\n";
  sections[0].results = {testing::narrow_cell("onnxruntime", 2.0, 400.0)};
  sections[1].title = "CLIP";
  sections[1].file = "studies/evaluation/clip.yaml";
  sections[1].outcome = report::ExperimentOutcome::kSkipped;
  sections[1].reason = "left out of --quick";
  const report::EvaluationHeader header{"framework", "all of it", true, ""};
  const auto decision = report::decide(sections, {});
  ASSERT_TRUE(decision.recommendation.has_value()) << decision.error;
  const auto markdown = report::evaluation_markdown(header, sections, decision);
  EXPECT_NE(markdown.find("# Evaluation: framework (--quick)"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 1 | Headline | studies/evaluation/headline.yaml | 1 | measured |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 2 | CLIP | studies/evaluation/clip.yaml | 0 | skipped: left out of --quick |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("## 1. Headline"), std::string::npos);
  EXPECT_NE(markdown.find("\n## headline\n"), std::string::npos) << "the study's heading goes one level down";
  const auto decision_at = markdown.find("## Decision");
  ASSERT_NE(decision_at, std::string::npos);
  EXPECT_GT(decision_at, markdown.find("## 2. CLIP"));
  EXPECT_NE(markdown.find("| model | objective | pick | its figures | runner-up | ruled out |", decision_at), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| resnet50 | lowest P99 latency | **onnxruntime", decision_at), std::string::npos) << markdown;
}

// Under `evaluate --per-host` the cells come from several machines: each verdict names its
// machine, the matrix has a column per machine, and an experiment that threw says it could not run.
TEST(EvaluationReport, ResultsFromSeveralMachinesGetAVerdictPerMachineAndTheMatrix) {
  std::vector<report::ExperimentSection> sections(2);
  sections[0].title = "Headline";
  sections[0].file = "headline.yaml";
  for (const auto* host : {"node-a", "node-b"})
    for (const auto* backend : {"onnxruntime", "openvino"}) {
      auto cell = testing::narrow_cell(backend, std::string(backend) == "openvino" ? 3.0 : 2.0, 400.0);
      cell.result.environment["hostname"] = host;
      cell.result.environment["cpu_model"] = "Test CPU";
      cell.path = std::string(host) + "/" + backend + ".json";
      sections[0].results.push_back(cell);
    }
  sections[1].title = "Pipeline";
  sections[1].file = "pipeline.yaml";
  sections[1].outcome = report::ExperimentOutcome::kFailedToRun;
  sections[1].reason = "on node-b: stage 2's model is unreadable";
  const auto decision = report::decide(sections, {});
  ASSERT_TRUE(decision.recommendation.has_value()) << decision.error;
  const auto markdown = report::evaluation_markdown({"framework", "", false, ""}, sections, decision);
  EXPECT_NE(markdown.find("| 2 | Pipeline | pipeline.yaml | 0 | could not run: on node-b: stage 2's model is unreadable |"),
            std::string::npos)
      << markdown;
  const auto decision_at = markdown.find("## Decision");
  ASSERT_NE(decision_at, std::string::npos);
  EXPECT_NE(markdown.find("| model | machine | objective | pick |", decision_at), std::string::npos) << markdown;
  for (const auto* host : {"node-a", "node-b"})
    EXPECT_NE(markdown.find(fmt::format("| resnet50 | {} (Test CPU) | lowest P99 latency | **onnxruntime", host), decision_at),
              std::string::npos)
        << markdown;
  const auto rows = report::verdict_rows(*decision.recommendation);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].machine, "node-a (Test CPU)");
  EXPECT_EQ(rows[1].machine, "node-b (Test CPU)");
  ASSERT_TRUE(decision.recommendation->machine_matrix.has_value());
  EXPECT_EQ(decision.recommendation->machine_matrix->machines,
            (std::vector<std::string>{"node-a (Test CPU)", "node-b (Test CPU)"}));
  EXPECT_NE(markdown.find("Which framework on which machine", decision_at), std::string::npos) << markdown;
}

// One machine: no machine column, as before.
TEST(EvaluationReport, OneMachineNeedsNoMachineColumn) {
  std::vector<report::ExperimentSection> sections(1);
  sections[0].results = {testing::narrow_cell("onnxruntime", 2.0, 400.0)};
  const auto decision = report::decide(sections, {});
  ASSERT_TRUE(decision.recommendation.has_value()) << decision.error;
  EXPECT_EQ(report::verdict_rows(*decision.recommendation).at(0).machine, "");
  EXPECT_EQ(report::outcome_text(report::ExperimentOutcome::kFailedToRun), "could not run");
}

}  // namespace
}  // namespace infermark::study

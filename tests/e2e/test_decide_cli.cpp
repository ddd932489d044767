// The decision commands (compare, recommend) on real result files written by `infermark run`.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e/cli_test_support.hpp"
#include "report/result_set.hpp"
#include "stats/latency_summary.hpp"

namespace {

using namespace infermark::testing;

class DecideCli : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_decide_"); }

  // One ONNX Runtime cell of tiny_cnn into `folder`; returns its result file.
  fs::path run_into(const std::string& folder) {
    const auto r =
        infermark("run " + (kModels / "tiny_cnn.onnx").string() + " -b onnxruntime --runs 200 --out " + (dir_ / folder).string());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto loaded = infermark::report::load_results({(dir_ / folder).string()});
    EXPECT_EQ(loaded.size(), 1u);
    return loaded.at(0).path;
  }
};

// A copy of a result whose samples are each scaled by `scale(i)`, the summary recomputed from them.
void write_scaled_copy(const fs::path& from, const fs::path& to, const std::function<double(std::size_t)>& scale) {
  std::ifstream in(from);
  auto json = nlohmann::json::parse(in);
  auto samples = json["samples_ms"].get<std::vector<double>>();
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] *= scale(i);
  json["samples_ms"] = samples;
  auto result = infermark::result::run_result_from_json(json, from.string());
  result.samples_ms = samples;
  result.latency_ms = infermark::stats::summarize(samples);
  fs::create_directories(to.parent_path());
  infermark::result::write_run_result(result, to.string());
}

}  // namespace

TEST_F(DecideCli, CompareFindsNoRegressionBetweenRepeatRunsAndFlagsAPlantedOne) {
  const auto first = run_into("a");
  // A rerun of the same configuration: the same samples with +-2% jitter (deterministic; two real
  // runs on this shared machine differ by far more than that, which a test must not depend on).
  write_scaled_copy(first, dir_ / "b" / "tiny_cnn.onnxruntime.json",
                    [](std::size_t i) { return 1.0 + 0.02 * std::sin(i * 2.3); });
  const auto same =
      infermark("compare " + (dir_ / "a").string() + " " + (dir_ / "b").string() + " --fail-on-regression 10 --json");
  ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
  const auto json = nlohmann::json::parse(same.out);
  EXPECT_EQ(json["regressions"], 0);
  ASSERT_EQ(json["cells"].size(), 1u);
  EXPECT_EQ(json["cells"][0]["metrics"][0]["method"], "Mann-Whitney U");

  const auto slower = dir_ / "slower" / "tiny_cnn.onnxruntime.json";
  write_scaled_copy(first, slower, [](std::size_t) { return 1.2; });  // the planted 20% regression
  const auto planted = infermark("compare " + first.string() + " " + slower.string() + " --fail-on-regression 10");
  EXPECT_EQ(planted.exit_code, 1) << planted.out << planted.err;
  EXPECT_TRUE(std::regex_search(planted.out, std::regex(R"(\| P50 latency ms .*\+20\.0% .*\| regression +\|)"))) << planted.out;
  EXPECT_NE(planted.out.find("1 of 1 matched cell(s) regressed"), std::string::npos) << planted.out;

  const auto report_only = infermark("compare " + first.string() + " " + slower.string());
  EXPECT_EQ(report_only.exit_code, 0) << "without --fail-on-regression a regression is reported, not failed";
}

TEST_F(DecideCli, CompareRejectsMissingPathsAndDifferentModels) {
  const auto missing = infermark("compare " + (dir_ / "nope").string() + " " + (dir_ / "nope2").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find((dir_ / "nope").string()), std::string::npos) << missing.err;

  const auto tiny = run_into("tiny");
  auto other = nlohmann::json::parse(slurp(tiny));
  other["model"]["name"] = "other_model";
  std::ofstream(dir_ / "other.json") << other.dump();
  const auto different = infermark("compare " + tiny.string() + " " + (dir_ / "other.json").string());
  EXPECT_EQ(different.exit_code, 2);
  EXPECT_NE(different.err.find("different models"), std::string::npos) << different.err;
}

TEST_F(DecideCli, RecommendPicksAndExplainsOrSaysWhyNothingFits) {
  const auto result = run_into("run");
  const auto fits = infermark("recommend " + (dir_ / "run").string() + " --p99-ms 1000");
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  EXPECT_NE(fits.out.find("Pick onnxruntime"), std::string::npos) << fits.out;
  EXPECT_NE(fits.out.find("Why:"), std::string::npos) << fits.out;
  EXPECT_NE(fits.out.find("### Decision trees of the field guides"), std::string::npos) << fits.out;

  const auto none = infermark("recommend " + result.string() + " --p99-ms 0.000001");
  EXPECT_EQ(none.exit_code, 3) << none.out << none.err;
  EXPECT_TRUE(std::regex_search(none.out, std::regex(R"(- onnxruntime t\d+: P99 \S+ ms > 1e-06 ms)"))) << none.out;
  EXPECT_NE(none.out.find("No cell meets every constraint."), std::string::npos) << none.out;

  const auto missing = infermark("recommend " + (dir_ / "missing.json").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find((dir_ / "missing.json").string()), std::string::npos) << missing.err;
}

TEST_F(DecideCli, RecommendJudgesARealLlamaCppResultOnTtftAndTheLlmDecisionTree) {
  if (!infermark::BackendRegistry{INFERMARK_PLUGIN_DIR}.is_available("llamacpp")) GTEST_SKIP() << "llamacpp is not built";
  const auto run = infermark("run " + (kModels / "llama-tiny.gguf").string() +
                             " -b llamacpp --prompt-tokens 16 --output-tokens 8 --warmup 1 --runs 8 --threads 1 --out " +
                             (dir_ / "llm").string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto loaded = infermark::report::load_results({(dir_ / "llm").string()});
  ASSERT_EQ(loaded.size(), 1u);
  const auto& result = loaded[0].result;
  ASSERT_TRUE(result.generation && result.generation->ttft_ms);
  // The verdict follows from what was measured, whatever this machine's speed.
  const double ttft_p99 = result.generation->ttft_ms->at(99).value;
  const bool within = ttft_p99 <= 300.0;

  const auto json_run = infermark("recommend " + (dir_ / "llm").string() + " --ttft-ms 300 --json");
  EXPECT_EQ(json_run.exit_code, within ? 0 : 3) << json_run.out << json_run.err;
  const auto json = nlohmann::json::parse(json_run.out);
  const auto& model = json["models"][0];
  const auto& cell = within ? model["ranked"][0] : model["rejected"][0];
  ASSERT_EQ(cell["checks"].size(), 1u) << cell.dump(2);
  EXPECT_EQ(cell["checks"][0]["constraint"], "TTFT");
  EXPECT_EQ(cell["checks"][0]["outcome"], within ? "met" : "failed");
  EXPECT_DOUBLE_EQ(cell["ttft_p99_ms"].get<double>(), ttft_p99);
  // llama.cpp records the parameter count, so memory per billion parameters is known.
  ASSERT_TRUE(cell["parameters"].is_number()) << cell.dump(2);
  EXPECT_GT(cell["parameters"].get<double>(), 0.0);
  EXPECT_NEAR(cell["gb_per_billion_parameters"].get<double>(),
              result.memory.peak_rss_mb / 1024 / (cell["parameters"].get<double>() / 1e9), 1e-9);
  bool long_generation_seen = false;
  for (const auto& branch : model["decision_tree_branches"])
    if (branch["tree"] == "Which engine for the model and workload" && branch["branch"] == "long generation") {
      long_generation_seen = true;
      EXPECT_EQ(branch["selected_by"], "--ttft-ms");
      EXPECT_EQ(branch["verdict"], "not measured here");
      EXPECT_NE(branch["detail"].get<std::string>().find("lowest TTFT: llamacpp t1"), std::string::npos) << branch.dump();
    }
  EXPECT_TRUE(long_generation_seen);

  const auto text = infermark("recommend " + (dir_ / "llm").string() + " --ttft-ms 300");
  EXPECT_NE(text.out.find("LLM serving, beside the baselines of *AI model inference framework performance testing, a "
                          "panoramic analysis* (TTFT 300 ms"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("- Which engine for the model and workload: long generation → vLLM, selected by --ttft-ms: "
                          "**not measured here**"),
            std::string::npos)
      << text.out;
}

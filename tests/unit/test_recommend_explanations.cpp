// `recommend`'s explanation says what the constraints given say: the "Constraints:" line and every
// model's "Why" list come from one constraint set, so each flag alone is named in both and never
// met with "No constraints given".
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "report/recommend.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using testing::llm_cell;
using testing::narrow_cell;

struct FlagAlone {
  const char* flag;
  std::function<void(report::Constraints&)> set;
  std::string named;  // what the Constraints line and every model's explanation must mention
};

const std::vector<FlagAlone>& every_flag() {
  static const std::vector<FlagAlone> flags{
      {"--p99-ms", [](auto& c) { c.p99_ms = 1000.0; }, "1000 ms"},
      {"--min-qps", [](auto& c) { c.min_qps = 1.0; }, "1 inferences/s"},
      {"--mem-mb", [](auto& c) { c.mem_mb = 4096.0; }, "4096 MB"},
      {"--max-accuracy-loss", [](auto& c) { c.max_accuracy_loss_pct = 5.0; }, "accuracy loss"},
      {"--watts", [](auto& c) { c.watts = 100.0; }, "power"},
      {"--ttft-ms", [](auto& c) { c.ttft_ms = 300.0; }, "TTFT"},
      {"--tpot-ms", [](auto& c) { c.tpot_ms = 30.0; }, "TPOT"},
      {"--energy", [](auto& c) { c.energy = true; }, "energy"},
      {"--dynamic-shapes", [](auto& c) { c.dynamic_shapes = true; }, "dynamic input shapes"},
      {"--price-per-hour", [](auto& c) { c.price_per_hour = 2.0; }, "2 per hour"},
      {"--target-qps", [](auto& c) { c.target_qps = 100.0; }, "machines"},
      {"--model-gflops", [](auto& c) { c.model_gflops = 4.0; }, "GFLOP"},
      {"--domestic-hardware", [](auto& c) { c.domestic_hardware = true; }, "domestic hardware"},
      {"--fast-iteration", [](auto& c) { c.fast_iteration = true; }, "fast iteration"},
      {"--dynamic-control-flow", [](auto& c) { c.dynamic_control_flow = true; }, "dynamic control flow"},
      {"--multi-backend", [](auto& c) { c.multi_backend = true; }, "multi-backend"},
  };
  return flags;
}

// Three CNN cells and an LLM cell (TTFT ~120 ms, TPOT ~10 ms): two models, so LLM-only limits meet
// a model they do not concern.
std::vector<report::LoadedResult> cnn_and_llm() {
  return {narrow_cell("onnxruntime", 20.0, 300.0), narrow_cell("openvino", 10.0, 500.0), narrow_cell("opencv", 50.0, 100.0),
          llm_cell(120.0, 10.0, 200.0, "")};
}

bool mentions(std::string text, std::string part) {
  const auto lower = [](std::string& s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  };
  lower(text);
  lower(part);
  return text.find(part) != std::string::npos;
}

std::string constraints_line(const std::string& markdown) {
  const auto start = markdown.find("Constraints: ");
  return start == std::string::npos ? "" : markdown.substr(start, markdown.find('\n', start) - start);
}

TEST(RecommendExplanation, EachConstraintFlagAloneIsNamedInTheConstraintsLineAndEveryModelsWhy) {
  for (const auto& flag : every_flag()) {
    SCOPED_TRACE(flag.flag);
    report::Constraints c;
    flag.set(c);
    const auto rec = report::recommend(cnn_and_llm(), c);
    const auto text = report::to_markdown(rec);
    EXPECT_FALSE(mentions(text, "No constraints given")) << text;
    const auto line = constraints_line(text);
    EXPECT_NE(line, "Constraints: none.") << text;
    EXPECT_TRUE(mentions(line, flag.named)) << line;
    ASSERT_EQ(rec.models.size(), 2u);
    for (const auto& m : rec.models) {
      std::string why;
      for (const auto& sentence : m.explanation) why += sentence + "\n";
      EXPECT_TRUE(mentions(why, flag.named)) << m.model << ":\n" << why;
    }
  }
}

TEST(RecommendExplanation, TtftAndTpotSayTheyConcernLlmCellsOnlyWhereAModelHasNone) {
  report::Constraints c;
  c.ttft_ms = 300.0;
  c.tpot_ms = 30.0;
  const auto rec = report::recommend(cnn_and_llm(), c);
  const auto text = report::to_markdown(rec);
  EXPECT_TRUE(mentions(text, "Constraints: TTFT P99 <= 300 ms (LLM cells), TPOT P99 <= 30 ms (LLM cells).")) << text;
  EXPECT_FALSE(mentions(text, "No constraints given")) << text;
  const auto& cnn = rec.models[1];  // resnet50, after llama-tiny
  ASSERT_EQ(cnn.model, "resnet50");
  std::string why;
  for (const auto& sentence : cnn.explanation) why += sentence + "\n";
  EXPECT_TRUE(mentions(why, "TTFT P99 <= 300 ms (LLM cells), TPOT P99 <= 30 ms (LLM cells) concern LLM cells only")) << why;
  const auto& llm = rec.models[0];
  std::string llm_why;
  for (const auto& sentence : llm.explanation) llm_why += sentence + "\n";
  EXPECT_TRUE(mentions(llm_why, "Tightest constraint for the pick: TTFT P99")) << llm_why;
}

TEST(RecommendExplanation, WithNothingGivenEveryCompletedCellQualifies) {
  const auto rec = report::recommend(cnn_and_llm(), {});
  const auto text = report::to_markdown(rec);
  EXPECT_TRUE(mentions(text, "Constraints: none.")) << text;
  EXPECT_TRUE(mentions(text, "No constraints given, so every completed cell qualifies")) << text;
}

}  // namespace
}  // namespace infermark

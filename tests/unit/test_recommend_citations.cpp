// Outside this project nobody knows the field guides by file name ("seed 000"): `recommend`, in
// Markdown and JSON, and `report`'s tables cite each guide by its title.
#include <gtest/gtest.h>

#include <regex>

#include "report/markdown_report.hpp"
#include "report/recommend.hpp"
#include "report/study_summary.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using testing::llm_cell;
using testing::narrow_cell;

constexpr const char* kTitles[] = {"AI model inference framework performance evaluation",
                                   "AI model inference framework selection and practice guide",
                                   "AI model inference framework performance testing, a panoramic analysis"};

// "seed 000", "seeds'", "Seed decision trees"; not a random seed's "seed": 42 field (none is printed here).
const std::regex kSeedCitation(R"(\b[Ss]eeds?\b)");

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FieldGuideCitations, RecommendCitesEveryGuideByTitleAndNoSeed) {
  report::Constraints c;
  c.p99_ms = 1000.0;
  c.ttft_ms = 300.0;
  const auto rec = report::recommend(
      {narrow_cell("onnxruntime", 20.0, 300.0), narrow_cell("openvino", 10.0, 500.0), llm_cell(120.0, 10.0, 200.0, "2000000000")},
      c);
  const auto text = report::to_markdown(rec);
  const auto json = report::to_json(rec).dump();
  EXPECT_FALSE(std::regex_search(text, kSeedCitation)) << text;
  EXPECT_FALSE(std::regex_search(json, kSeedCitation)) << json;
  for (const auto* title : kTitles) {
    EXPECT_TRUE(contains(text, title)) << title << "\n" << text;
    EXPECT_TRUE(contains(json, title)) << title;
  }
}

TEST(FieldGuideCitations, ReportTablesCiteTheGuidesBaselinesByTitle) {
  const auto llm = report::markdown_report({llm_cell(120.0, 10.0, 2457.6, "2000000000")});
  EXPECT_FALSE(std::regex_search(llm, kSeedCitation)) << llm;
  EXPECT_TRUE(contains(llm, "(baseline of *AI model inference framework performance testing, a panoramic analysis*: 1.2)"))
      << llm;

  // One and four instances in one process: the instances table beside the guide's 1.2x.
  auto one = narrow_cell("onnxruntime", 10.0, 300.0), four = narrow_cell("onnxruntime", 12.0, 360.0);
  one.result.scenario.parameters.lanes = 1;
  four.result.scenario.parameters.lanes = 4;
  four.path = "/results/four.json";
  const auto summary = report::study_summary({one, four}, {"concurrency"});
  EXPECT_FALSE(std::regex_search(summary, kSeedCitation)) << summary;
  EXPECT_TRUE(contains(summary, "### Instances and memory (*AI model inference framework performance evaluation* §3.3: "))
      << summary;
}

}  // namespace
}  // namespace infermark

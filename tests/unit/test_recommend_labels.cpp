// recommend --max-accuracy-loss against labels: points of top-1 below the family's FP32 reference
// on the same labelled inputs, else agreement with the cross-check reference, else unknown.
#include <gtest/gtest.h>

#include "report/label_accuracy_loss.hpp"
#include "report/recommend.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using testing::latency_samples;
using testing::synthetic_result;

// A cell of `model` on `backend` that scored `correct` of 7 labelled images; `reference` names
// the cross-check reference backend ("" for no cross-check).
report::LoadedResult labelled(const std::string& model, const std::string& backend, int correct,
                              const std::string& reference = "onnxruntime", double median_ms = 10.0) {
  auto cell = synthetic_result(latency_samples(200, median_ms, 3, 0.02), {.backend = backend, .model = model});
  cell.result.label_accuracy =
      stats::LabelAccuracy{"models/inputs/imagenet_labelled.labels.json", "logits", 7, correct / 7.0, 1.0};
  if (!reference.empty()) {
    const bool is_reference = backend == reference && model == "efficientnet-lite0";
    cell.result.cross_check = result::CrossCheck{reference, "ref.json", is_reference, {}, {}};
    stats::OutputAgreement logits;
    logits.output = "logits";
    logits.cosine_similarity = 0.99;
    logits.top1_agreement = is_reference ? 1.0 : 0.5;  // agreement would say 50% lost: labels must win
    cell.result.cross_check->outputs.push_back(logits);
  }
  return cell;
}

const report::CellAssessment& only_cell(const report::Recommendation& rec, const std::string& model) {
  for (const auto& m : rec.models)
    if (m.model == model) return m.ranked.empty() ? m.rejected.at(0) : m.ranked.at(0);
  throw std::out_of_range(model);
}

std::vector<report::LoadedResult> family() {
  return {labelled("efficientnet-lite0", "onnxruntime", 6), labelled("efficientnet-lite0_fp16", "onnxruntime", 6),
          labelled("efficientnet-lite0_int8", "onnxruntime", 5)};
}

TEST(RecommendLabels, Int8AndFp16AreJudgedInPointsOfTop1BelowTheirFp32Sibling) {
  report::Constraints c;
  c.max_accuracy_loss_pct = 10.0;
  const auto rec = report::recommend(family(), c);
  const auto& int8 = only_cell(rec, "efficientnet-lite0_int8");
  EXPECT_EQ(int8.figures.accuracy_measure, report::AccuracyMeasure::kLabels);
  ASSERT_TRUE(int8.figures.accuracy_loss);
  EXPECT_NEAR(*int8.figures.accuracy_loss, 1.0 / 7.0, 1e-12);
  EXPECT_EQ(int8.binding(),
            "accuracy loss 14.3 points > 10 points (top-1 vs 7 labels, points below efficientnet-lite0 on onnxruntime "
            "(85.7%); 1 sample = 14.3 points)");
  const auto& fp16 = only_cell(rec, "efficientnet-lite0_fp16");
  EXPECT_TRUE(fp16.meets_all()) << fp16.binding();
  EXPECT_NEAR(*fp16.figures.accuracy_loss, 0.0, 1e-12);
  const auto& fp32 = only_cell(rec, "efficientnet-lite0");
  EXPECT_TRUE(fp32.meets_all());
  EXPECT_NE(fp32.figures.accuracy_source.find("labels reference itself"), std::string::npos);

  const auto text = report::to_markdown(rec);
  EXPECT_NE(text.find("| top-1 vs labels |"), std::string::npos) << text;
  EXPECT_NE(text.find("|   14.3 points |       71.4% (7) |"), std::string::npos) << text;
  EXPECT_NE(text.find("Accuracy loss judged by top-1 vs labels for onnxruntime t2."), std::string::npos) << text;
  EXPECT_NE(text.find("One labelled sample is 14.3 points of top-1, more than the 10 allowed"), std::string::npos) << text;
}

TEST(RecommendLabels, ALimitAboveOneSampleLetsALossOfOneImagePass) {
  report::Constraints c;
  c.max_accuracy_loss_pct = 15.0;
  const auto rec = report::recommend(family(), c);
  EXPECT_TRUE(only_cell(rec, "efficientnet-lite0_int8").meets_all());
  EXPECT_EQ(report::to_markdown(rec).find("One labelled sample"), std::string::npos);
}

TEST(RecommendLabels, PrecisionVariantsAreRankedTogetherSoTheLimitDecidesWhichPrecision) {
  auto cells = family();
  cells[2] = labelled("efficientnet-lite0_int8", "onnxruntime", 5, "onnxruntime", 4.0);  // fastest, one image lost
  report::Constraints c;
  c.max_accuracy_loss_pct = 10.0;
  auto rec = report::recommend(cells, c);
  ASSERT_EQ(rec.families.size(), 1u);
  const auto& f = rec.families[0];
  EXPECT_EQ(f.family, "efficientnet-lite0");
  ASSERT_EQ(f.ranked.size(), 2u);
  ASSERT_EQ(f.rejected.size(), 1u);
  EXPECT_EQ(f.rejected[0].model_name, "efficientnet-lite0_int8");
  const auto text = report::to_markdown(rec);
  EXPECT_NE(text.find("## efficientnet-lite0: precision variants side by side"), std::string::npos) << text;
  c.max_accuracy_loss_pct = 15.0;  // one image's loss allowed: INT8 is the pick
  rec = report::recommend(cells, c);
  EXPECT_EQ(rec.families.at(0).ranked.front().model_name, "efficientnet-lite0_int8");
  EXPECT_EQ(report::to_json(rec)["families"][0]["pick"]["label"], "onnxruntime t2");
  // One model alone has no family section.
  EXPECT_TRUE(report::recommend({cells[0]}, c).families.empty());
}

TEST(RecommendLabels, ACellThatScoresHigherThanItsReferenceLosesNothing) {
  auto cells = family();
  cells[2].result.label_accuracy->top1 = 1.0;
  const auto losses = report::label_accuracy_losses(cells);
  ASSERT_EQ(losses.count(cells[2].path), 1u);
  EXPECT_NEAR(losses.at(cells[2].path).loss_points(), -100.0 / 7.0, 1e-9);
  report::Constraints c;
  c.max_accuracy_loss_pct = 0.0;
  EXPECT_TRUE(only_cell(report::recommend(cells, c), "efficientnet-lite0_int8").meets_all());
}

TEST(RecommendLabels, WithoutLabelsTheAgreementWithTheReferenceJudges) {
  auto cells = family();
  for (auto& cell : cells) cell.result.label_accuracy.reset();
  report::Constraints c;
  c.max_accuracy_loss_pct = 10.0;
  const auto rec = report::recommend(cells, c);
  const auto& int8 = only_cell(rec, "efficientnet-lite0_int8");
  EXPECT_EQ(int8.figures.accuracy_measure, report::AccuracyMeasure::kAgreement);
  EXPECT_EQ(int8.binding(), "accuracy loss 50% > 10% (1 - top-1 agreement with onnxruntime)");
  const auto text = report::to_markdown(rec);
  EXPECT_EQ(text.find("top-1 vs labels |"), std::string::npos) << text;
  EXPECT_NE(text.find("Accuracy loss judged by agreement with the reference backend for onnxruntime t2."), std::string::npos);
  EXPECT_EQ(only_cell(rec, "efficientnet-lite0").figures.accuracy_measure, report::AccuracyMeasure::kAgreement);
  EXPECT_EQ(text.find("judged by nothing"), std::string::npos) << text;
}

TEST(RecommendLabels, LabelsFromAnotherFileOrNoFp32SiblingFallBackToAgreement) {
  auto cells = family();
  cells[2].result.label_accuracy->labels_file = "other.labels.json";
  EXPECT_EQ(report::label_accuracy_losses(cells).count(cells[2].path), 0u);
  const std::vector<report::LoadedResult> alone{cells[1], cells[2]};  // no FP32 cell at all
  EXPECT_TRUE(report::label_accuracy_losses(alone).empty());
  report::Constraints c;
  c.max_accuracy_loss_pct = 60.0;
  EXPECT_EQ(only_cell(report::recommend(alone, c), "efficientnet-lite0_int8").figures.accuracy_measure,
            report::AccuracyMeasure::kAgreement);
}

TEST(RecommendLabels, WithoutACrossCheckTheFp32SiblingOnTheSameBackendIsTheReference) {
  const std::vector<report::LoadedResult> cells{labelled("efficientnet-lite0", "openvino", 6, ""),
                                                labelled("efficientnet-lite0_int8", "openvino", 4, ""),
                                                labelled("efficientnet-lite0_int8", "libtorch", 4, "")};
  report::Constraints c;
  c.max_accuracy_loss_pct = 20.0;
  const auto rec = report::recommend(cells, c);
  const auto& m = rec.models.at(1);
  ASSERT_EQ(m.model, "efficientnet-lite0_int8");
  ASSERT_EQ(m.rejected.size(), 2u);
  for (const auto& cell : m.rejected) {
    if (cell.backend == "openvino") {
      EXPECT_EQ(cell.figures.accuracy_measure, report::AccuracyMeasure::kLabels);
      EXPECT_NE(cell.binding().find("accuracy loss 28.6 points > 20 points"), std::string::npos) << cell.binding();
      EXPECT_NE(cell.binding().find("(85.7%; same backend, no cross-check reference)"), std::string::npos);
    } else {  // no FP32 libtorch cell and no cross-check: cannot be judged
      EXPECT_EQ(cell.figures.accuracy_measure, report::AccuracyMeasure::kNone);
      EXPECT_EQ(cell.binding(), "accuracy loss cannot be judged: no cross-check in the result (no reference backend ran)");
    }
  }
  EXPECT_NE(report::to_markdown(rec).find("Accuracy loss judged by nothing for libtorch t2; top-1 vs labels for openvino t2."),
            std::string::npos)
      << report::to_markdown(rec);
}

}  // namespace
}  // namespace infermark

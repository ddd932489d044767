// Output kinds from the zoo manifest pick the agreement measure: per-step top-1 for OCR's
// per-step class scores, mean vector cosine for embeddings, top-1 for class scores; an output
// without a kind keeps the choice by rank (vector cosine for rank >= 3).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/output_kind.hpp"
#include "report/recommend.hpp"
#include "stats/agreement_measure.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

// A [batch, steps, classes] softmax compared with its reference: the steps' vectors agree in
// direction (cosine 0.999) while 10% of the steps read another character.
stats::OutputAgreement per_step_scores() {
  stats::OutputAgreement o;
  o.output = "softmax_11.tmp_0";
  o.cosine_similarity = 0.998;
  o.top1_agreement = 0.90;
  o.vector_cosine_mean = 0.999;
  o.vector_cosine_min = 0.95;
  return o;
}

TEST(OutputKind, EachKindPicksItsMeasureAndNoKindKeepsTheChoiceByRank) {
  using stats::AgreementMeasure;
  const auto o = per_step_scores();
  EXPECT_EQ(stats::agreement_figure(o, OutputKind::kSequenceClassScores).measure, AgreementMeasure::kStepTop1);
  EXPECT_DOUBLE_EQ(stats::agreement_figure(o, OutputKind::kSequenceClassScores).agreement, 0.90);
  EXPECT_EQ(stats::agreement_figure(o, OutputKind::kClassScores).measure, AgreementMeasure::kTop1);
  EXPECT_EQ(stats::agreement_figure(o, OutputKind::kEmbedding).measure, AgreementMeasure::kVectorCosine);
  EXPECT_EQ(stats::agreement_figure(o, OutputKind::kOther).measure, AgreementMeasure::kCosine);
  EXPECT_EQ(stats::agreement_figure(o, std::nullopt).measure, AgreementMeasure::kVectorCosine);

  EXPECT_EQ(stats::agreement_text(o, OutputKind::kSequenceClassScores), "90.0% per step");
  EXPECT_EQ(stats::agreement_text(o, OutputKind::kClassScores), "90.0%");
  EXPECT_EQ(stats::agreement_text(o, OutputKind::kEmbedding), "cos 0.99900 (min 0.9500)");
  EXPECT_EQ(stats::agreement_text(o, std::nullopt), "cos 0.99900 (min 0.9500)");
  EXPECT_EQ(stats::agreement_text(o, OutputKind::kOther), "cos 0.99800");

  auto plain = o;  // rank 2 without classes' meaning: no vectors; without a kind, top-1 as before
  plain.vector_cosine_mean.reset();
  EXPECT_EQ(stats::agreement_figure(plain, std::nullopt).measure, AgreementMeasure::kTop1);
  EXPECT_EQ(stats::agreement_figure(plain, OutputKind::kEmbedding).measure, AgreementMeasure::kCosine);
}

TEST(OutputKind, RecommendJudgesOcrByPerStepTop1) {
  auto cell = testing::narrow_cell("openvino", 10.0, 200.0);
  cell.result.model.output_kinds["softmax_11.tmp_0"] = OutputKind::kSequenceClassScores;
  cell.result.cross_check = result::CrossCheck{"onnxruntime", "ref.json", false, {per_step_scores()}, {}};
  report::Constraints c;
  c.max_accuracy_loss_pct = 5.0;
  const auto rec = report::recommend({cell}, c);
  const auto& judged = rec.models.at(0).rejected.at(0);
  EXPECT_EQ(judged.binding(), "accuracy loss 10% > 5% (1 - per-step top-1 agreement with onnxruntime)");
  cell.result.model.output_kinds.clear();  // today's behaviour: the vectors' cosine, which hides the misreads
  EXPECT_TRUE(report::recommend({cell}, c).models.at(0).ranked.at(0).meets_all());
}

TEST(OutputKind, ReadFromTheManifestAndUnknownKindsNameTheManifestAndOutput) {
  const auto dir = std::filesystem::temp_directory_path() / "infermark_output_kind_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.json")
      << R"({"outputs": [{"name": "logits", "dtype": "float32", "shape": [1, 10], "kind": "class_scores"},
                                                  {"name": "extra", "dtype": "float32", "shape": [1]}]})";
  const auto kinds = read_output_kinds(dir / "m.onnx");
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds.at("logits"), OutputKind::kClassScores);
  EXPECT_TRUE(read_output_kinds(dir / "absent.onnx").empty());
  std::ofstream(dir / "bad.json")
      << R"({"outputs": [{"name": "logits", "dtype": "float32", "shape": [1, 10], "kind": "logits"}]})";
  try {
    read_output_kinds(dir / "bad.onnx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: outputs.logits: output kind 'logits' is none of class_scores"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace infermark

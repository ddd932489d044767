// `recommend --max-accuracy-loss` on language-model cells: the quality loss is the perplexity
// above the model family's higher-precision cell on the same text (report/perplexity_loss), the
// same engine's first, another engine's where that engine has none.
#include <gtest/gtest.h>

#include "report/recommend.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

report::LoadedResult scored(const std::string& model, const std::string& backend, double perplexity,
                            const std::string& text = "/texts/GPL-3", long long tokens = 7639) {
  auto cell = testing::llm_cell(120.0, 10.0, 200.0, "");
  cell.result.model.name = model;
  cell.result.backend.name = backend;
  result::PerplexityResult p;
  p.perplexity = perplexity;
  p.source = text;
  p.text_bytes = 35149;
  p.text_tokens = tokens;
  p.tokens_scored = tokens / 2;
  cell.result.generation->perplexity = p;
  cell.path = "/results/" + model + "." + backend + ".json";
  return cell;
}

const report::CellAssessment& cell_of(const report::Recommendation& rec, const std::string& model, const std::string& backend) {
  for (const auto& m : rec.models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& c : *list)
        if (c.model_name == model && c.backend == backend) return c;
  throw std::out_of_range(model + " on " + backend);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RecommendPerplexity, LossIsAgainstTheFamilysHigherPrecisionCellOnTheSameText) {
  const std::vector<report::LoadedResult> cells{scored("smollm2", "llamacpp", 20.0),
                                                scored("smollm2_q4_0", "llamacpp", 25.0),
                                                scored("smollm2_fp16", "ovllm", 20.1, "/texts/GPL-3", 7658),
                                                scored("smollm2_int4", "ovllm", 22.0),
                                                scored("smollm2_int4", "ortgenai", 28.0),
                                                scored("smollm2_q8_0", "llamacpp", 21.0, "/texts/other")};
  report::Constraints c;
  c.max_accuracy_loss_pct = 10.0;
  const auto rec = report::recommend(cells, c);

  const auto& f16 = cell_of(rec, "smollm2", "llamacpp");
  EXPECT_EQ(f16.figures.accuracy_measure, report::AccuracyMeasure::kPerplexity);
  EXPECT_DOUBLE_EQ(*f16.figures.accuracy_loss, 0.0);  // its own reference

  const auto& q4 = cell_of(rec, "smollm2_q4_0", "llamacpp");
  EXPECT_NEAR(*q4.figures.accuracy_loss, 0.25, 1e-9);
  EXPECT_FALSE(q4.meets_all());
  EXPECT_TRUE(contains(q4.binding(), "perplexity 25.00 vs 20.00 of smollm2 on llamacpp (+25.0%); same text, same token count"))
      << q4.binding();

  const auto& ov_int4 = cell_of(rec, "smollm2_int4", "ovllm");  // its own engine's FP16
  EXPECT_NEAR(*ov_int4.figures.accuracy_loss, 22.0 / 20.1 - 1.0, 1e-9);
  EXPECT_TRUE(ov_int4.meets_all());
  EXPECT_TRUE(contains(ov_int4.figures.accuracy_source, "of smollm2_fp16 on ovllm")) << ov_int4.figures.accuracy_source;
  EXPECT_TRUE(contains(ov_int4.figures.accuracy_source, "same text cut into 7639 and 7658 tokens"))
      << ov_int4.figures.accuracy_source;

  const auto& ov_fp16 = cell_of(rec, "smollm2_fp16", "ovllm");  // nothing above FP16 on OpenVINO: llama.cpp's F16
  EXPECT_NEAR(*ov_fp16.figures.accuracy_loss, 0.005, 1e-9);
  EXPECT_TRUE(contains(ov_fp16.figures.accuracy_source, "of smollm2 on llamacpp (+0.5%), another engine"))
      << ov_fp16.figures.accuracy_source;

  const auto& genai = cell_of(rec, "smollm2_int4", "ortgenai");
  EXPECT_NEAR(*genai.figures.accuracy_loss, 0.4, 1e-9);
  EXPECT_FALSE(genai.meets_all());

  const auto& other_text = cell_of(rec, "smollm2_q8_0", "llamacpp");  // no reference scored that text
  EXPECT_FALSE(other_text.figures.accuracy_loss.has_value());
  EXPECT_EQ(other_text.checks.at(0).outcome, report::Outcome::kUnknown);
  EXPECT_TRUE(contains(other_text.binding(), "no higher-precision cell of the model family scored the same text"))
      << other_text.binding();
}

TEST(RecommendPerplexity, AnLlmCellWithoutPerplexitySaysHowToMeasureIt) {
  auto cell = testing::llm_cell(120.0, 10.0, 200.0, "");
  report::Constraints c;
  c.max_accuracy_loss_pct = 5.0;
  const auto rec = report::recommend({cell}, c);
  const auto& only = rec.models.at(0).rejected.at(0);
  EXPECT_TRUE(contains(only.binding(), "no perplexity in the result (run with --perplexity-text)")) << only.binding();
}

}  // namespace
}  // namespace infermark

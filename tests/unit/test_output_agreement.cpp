#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "stats/output_agreement.hpp"

namespace infermark::stats {
namespace {

Tensor floats(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  Tensor t{name, DType::kFloat32, std::move(shape), std::vector<std::byte>(values.size() * 4)};
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

}  // namespace

TEST(OutputAgreement, IdenticalOutputsAgreeFully) {
  const auto a = floats("logits", {2, 3}, {1, 2, 3, 3, 2, 1});
  const auto result = compare_outputs({a}, {a});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_TRUE(result[0].comparable);
  EXPECT_EQ(result[0].max_abs_error, 0.0);
  EXPECT_NEAR(result[0].cosine_similarity, 1.0, 1e-12);
  EXPECT_EQ(result[0].top1_agreement, 1.0);
}

TEST(OutputAgreement, MeasuresErrorsAndTop1Flips) {
  const auto ref = floats("logits", {2, 3}, {1, 2, 3, 3, 2, 1});
  const auto cand = floats("logits", {2, 3}, {1, 2, 3.5f, 1, 2, 1.5f});  // row 2 argmax flips 0 -> 1
  const auto r = compare_outputs({ref}, {cand})[0];
  EXPECT_DOUBLE_EQ(r.max_abs_error, 2.0);
  EXPECT_NEAR(r.mean_abs_error, (0.5 + 2.0 + 0.5) / 6, 1e-9);
  EXPECT_EQ(r.top1_agreement, 0.5);
  EXPECT_LT(r.cosine_similarity, 1.0);
}

TEST(OutputAgreement, MissingOrReshapedOutputsAreNotComparable) {
  const auto ref = floats("logits", {1, 4}, {1, 2, 3, 4});
  EXPECT_FALSE(compare_outputs({ref}, {floats("other", {1, 4}, {1, 2, 3, 4})})[0].comparable);
  const auto reshaped = compare_outputs({ref}, {floats("logits", {2, 2}, {1, 2, 3, 4})})[0];
  EXPECT_FALSE(reshaped.comparable);
  EXPECT_NE(reshaped.note.find("2x2"), std::string::npos);
}

TEST(OutputAgreement, NoTop1ForVectors) {
  const auto v = floats("embedding", {4}, {1, 2, 3, 4});
  EXPECT_FALSE(compare_outputs({v}, {v})[0].top1_agreement.has_value());
}

TEST(OutputAgreement, CosinePerVectorForTokenEmbeddings) {
  // [batch 1, tokens 2, hidden 2]: token 0 keeps its direction (scaled), token 1 turns by 90 degrees.
  const auto ref = floats("last_hidden_state", {1, 2, 2}, {1, 0, 0, 1});
  const auto cand = floats("last_hidden_state", {1, 2, 2}, {2, 0, 1, 0});
  const auto r = compare_outputs({ref}, {cand})[0];
  ASSERT_TRUE(r.vector_cosine_mean.has_value());
  EXPECT_NEAR(*r.vector_cosine_mean, 0.5, 1e-12);
  EXPECT_NEAR(*r.vector_cosine_min, 0.0, 1e-12);
  EXPECT_NEAR(r.cosine_similarity, 2 / std::sqrt(2.0 * 5.0), 1e-12);  // the whole tensor as one vector
  const auto same = compare_outputs({ref}, {ref})[0];
  EXPECT_NEAR(*same.vector_cosine_mean, 1.0, 1e-12);
  EXPECT_NEAR(*same.vector_cosine_min, 1.0, 1e-12);
}

TEST(OutputAgreement, NoVectorCosineBelowRankThree) {
  const auto logits = floats("logits", {2, 3}, {1, 2, 3, 3, 2, 1});
  EXPECT_FALSE(compare_outputs({logits}, {logits})[0].vector_cosine_mean.has_value());
}

}  // namespace infermark::stats

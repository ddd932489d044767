// Shadow comparison by output kind: class scores judged by top-1, scores (a sigmoid, a VAD
// probability) by an absolute tolerance, embeddings by a cosine threshold, each configurable.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "serve/serve_config.hpp"
#include "serve/shadow_judge.hpp"

namespace infermark::serve {
namespace {

Tensor floats(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  Tensor t{name, DType::kFloat32, std::move(shape), std::vector<std::byte>(values.size() * sizeof(float))};
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

bool disagreed(const Tensor& primary, const Tensor& shadow, std::map<std::string, OutputKind> kinds = {},
               ShadowTolerance tolerance = {}) {
  return ShadowJudge(std::move(kinds), tolerance).judge({primary}, {shadow}).disagreed;
}

}  // namespace

TEST(ShadowJudge, ClassScoresDisagreeOnlyWhenATopClassDiffers) {
  const auto primary = floats("logits", {2, 3}, {1, 2, 3, 3, 2, 1});
  const auto flipped = floats("logits", {2, 3}, {1, 2, 3, 1.99f, 2, 1});   // row 2: class 0 -> 1, error 1.01
  const auto scaled = floats("logits", {2, 3}, {10, 20, 30, 30, 20, 10});  // same classes, error 27
  for (const auto& kinds : {std::map<std::string, OutputKind>{}, {{"logits", OutputKind::kClassScores}}}) {
    EXPECT_TRUE(disagreed(primary, flipped, kinds));
    EXPECT_FALSE(disagreed(primary, scaled, kinds));
  }
}

TEST(ShadowJudge, ScoresWithoutClassesAreHeldToTheTolerance) {
  // A sigmoid score per row and a VAD probability: no top-1 exists, and the cosine of two positive
  // scalars is 1 however far apart they are.
  const auto score = floats("score", {1, 1}, {0.9f});
  const auto vad = floats("speech_prob", {1}, {0.8f});
  EXPECT_TRUE(disagreed(score, floats("score", {1, 1}, {0.2f})));
  EXPECT_TRUE(disagreed(vad, floats("speech_prob", {1}, {0.05f})));
  EXPECT_TRUE(disagreed(score, floats("score", {1, 1}, {0.2f}), {{"score", OutputKind::kOther}}));
  EXPECT_FALSE(disagreed(score, floats("score", {1, 1}, {0.905f})));  // within the default 0.01
  ShadowTolerance loose;
  loose.max_abs_error = 0.75;
  EXPECT_FALSE(disagreed(score, floats("score", {1, 1}, {0.2f}), {}, loose));
}

TEST(ShadowJudge, EmbeddingsAreHeldToTheCosineThreshold) {
  const std::map<std::string, OutputKind> kinds{{"embedding", OutputKind::kEmbedding}};
  const auto primary = floats("embedding", {1, 4}, {1, 0.9f, 0, 0});
  const auto turned = floats("embedding", {1, 4}, {1, -0.9f, 0, 0});        // same largest entry, cosine 0.1
  const auto stretched = floats("embedding", {1, 4}, {1.1f, 0.99f, 0, 0});  // error 0.1, cosine 1
  EXPECT_TRUE(disagreed(primary, turned, kinds));
  EXPECT_FALSE(disagreed(primary, stretched, kinds));
  ShadowTolerance lenient;
  lenient.min_cosine = 0.05;
  EXPECT_FALSE(disagreed(primary, turned, kinds, lenient));
  // One vector per token (rank 3, no kind given): judged by the vectors' cosine, not their top-1.
  const auto tokens = floats("hidden", {1, 2, 3}, {3, 1, 0, 3, 0, 1});
  EXPECT_TRUE(disagreed(tokens, floats("hidden", {1, 2, 3}, {3, -1, 0, 3, 0, -1}), {}, {1e9, 0.99}));
  EXPECT_FALSE(disagreed(tokens, floats("hidden", {1, 2, 3}, {6, 2, 0, 6, 0, 2})));
}

TEST(ShadowJudge, MissingOrReshapedOutputsDisagreeAndTheLargestErrorIsKept) {
  const auto primary = floats("score", {1, 1}, {0.5f});
  EXPECT_TRUE(disagreed(primary, floats("other", {1, 1}, {0.5f})));
  EXPECT_TRUE(disagreed(primary, floats("score", {1, 2}, {0.5f, 0.5f})));
  EXPECT_TRUE(disagreed(primary, floats("score", {1, 1}, {std::numeric_limits<float>::quiet_NaN()})));
  const auto verdict = ShadowJudge({}, {}).judge({primary, floats("logits", {1, 2}, {1, 2})},
                                                 {floats("score", {1, 1}, {0.25f}), floats("logits", {1, 2}, {1, 2})});
  EXPECT_TRUE(verdict.disagreed);
  EXPECT_DOUBLE_EQ(verdict.max_abs_error, 0.25);
}

TEST(ShadowJudge, TheModelRepositoryFileSetsTheThresholdsPerModel) {
  const auto config = parse_serve_config(R"(
models:
  - name: scorer
    file: s.onnx
    variants:
      - {name: a, backend: onnxruntime, shadow: {to: b, share: 0.5, tolerance: 0.05, min_cosine: 0.999}}
      - {name: b, backend: onnxruntime, shadow: {to: a}}
)",
                                         "serve.yaml");
  const auto& tuned = config.models[0].variants[0].shadow->tolerance;
  EXPECT_DOUBLE_EQ(tuned.max_abs_error, 0.05);
  EXPECT_DOUBLE_EQ(tuned.min_cosine, 0.999);
  const auto& defaults = config.models[0].variants[1].shadow->tolerance;
  EXPECT_DOUBLE_EQ(defaults.max_abs_error, ShadowTolerance{}.max_abs_error);
  EXPECT_DOUBLE_EQ(defaults.min_cosine, ShadowTolerance{}.min_cosine);
  const auto error_of = [](const std::string& shadow) {
    try {
      parse_serve_config("models:\n  - {name: m, file: m.onnx, variants: [{name: a, backend: onnxruntime, shadow: " + shadow +
                             "}, {name: b, backend: onnxruntime}]}\n",
                         "serve.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("{to: b, tolerance: -1}").find("variant 'a': shadow: tolerance must not be negative"), std::string::npos);
  EXPECT_NE(error_of("{to: b, min_cosine: 2}").find("min_cosine must be in [-1, 1]"), std::string::npos);
  EXPECT_NE(error_of("{to: b, max_error: 1}").find("unknown key 'max_error'"), std::string::npos);
}

}  // namespace infermark::serve

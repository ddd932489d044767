// Checking recognised text against labels: greedy CTC decoding, edit distance in code points,
// and the accuracy a pipeline reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "pipeline/text_check.hpp"

namespace infermark::pipeline {
namespace {

// Scores [lines, steps, classes] whose best class per step is `best[line][step]`.
Tensor scores(const std::vector<std::vector<int>>& best, std::int64_t steps, std::int64_t classes) {
  Tensor t{"softmax", DType::kFloat32, {static_cast<std::int64_t>(best.size()), steps, classes}, {}};
  t.data.assign(t.element_count() * sizeof(float), std::byte{0});
  for (std::size_t l = 0; l < best.size(); ++l)
    for (std::size_t s = 0; s < best[l].size(); ++s) t.as<float>()[(l * steps + s) * classes + best[l][s]] = 1.0f;
  return t;
}

class TextCheckFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("infermark-text-check-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "chars.txt") << "a\nb\nc\n \n";  // classes 1..4; 0 is the blank
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path labels(const std::string& json) {
    std::ofstream(dir_ / "labels.json") << json;
    return dir_ / "labels.json";
  }
  std::filesystem::path dir_;
};

TEST(TextCheck, GreedyCtcMergesRepeatsAndDropsBlanks) {
  const std::vector<std::string> characters{"a", "b", "c"};
  // a a _ a b b _ _ c -> "aabc"; the second line "ca"; only `count` lines are read.
  const auto t = scores({{1, 1, 0, 1, 2, 2, 0, 0, 3}, {3, 0, 1, 0, 0, 0, 0, 0, 0}, {2, 2, 2, 0, 0, 0, 0, 0, 0}}, 9, 4);
  EXPECT_EQ(decode_text_lines(t, 2, characters), (std::vector<std::string>{"aabc", "ca"}));
  EXPECT_THROW((void)decode_text_lines(scores({{4}}, 1, 5), 1, characters), Error);  // class 4 has no symbol
}

TEST(TextCheck, EditDistanceCountsCodePointsNotBytes) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("café", "cafe"), 1U);  // é is two bytes, one character
  EXPECT_EQ(edit_distance("", "abc"), 3U);
}

TEST_F(TextCheckFiles, CountsExactLinesAndCharacterAccuracyIgnoringSpaces) {
  TextChecker checker({labels(R"({"lines": [["ab c", "cab"], ["a"]]})"), dir_ / "chars.txt"});
  EXPECT_EQ(checker.samples(), 2U);
  // Sample 0 reads "abc" (the space left out) and "cb": one exact line; characters "abc\ncab"
  // (7) against "abc\ncb": one deletion.
  checker.add(0, {scores({{1, 2, 3}, {3, 0, 2}}, 3, 5)}, 2);
  const auto& r = checker.record();
  EXPECT_EQ(r.requests, 1U);
  EXPECT_EQ(r.lines_expected, 2U);
  EXPECT_EQ(r.lines_recognised, 2U);
  EXPECT_EQ(r.lines_exact, 1U);
  EXPECT_EQ(r.characters_expected, 7U);
  EXPECT_EQ(r.character_errors, 1U);
  EXPECT_NEAR(r.character_accuracy, 6.0 / 7.0, 1e-12);
  EXPECT_NEAR(r.line_accuracy, 0.5, 1e-12);
  ASSERT_EQ(r.samples.size(), 1U);
  EXPECT_EQ(r.samples[0].recognised, (std::vector<std::string>{"abc", "cb"}));
}

TEST_F(TextCheckFiles, ASampleTheLabelsDoNotCoverIsAnErrorNamingTheFile) {
  TextChecker checker({labels(R"({"lines": [["a"]]})"), dir_ / "chars.txt"});
  try {
    checker.add(3, {scores({{1}}, 1, 5)}, 1);
    FAIL() << "sample 3 of a one-image label file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("labels.json"), std::string::npos) << e.what();
  }
}

TEST_F(TextCheckFiles, MalformedFilesAreRefusedWithTheirName) {
  for (const auto* bad : {"[1, 2]", R"({"lines": []})", R"({"lines": [[1]]})", "not json"}) {
    try {
      TextChecker checker({labels(bad), dir_ / "chars.txt"});
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("labels.json"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(TextChecker({labels(R"({"lines": [["a"]]})"), dir_ / "missing.txt"}), Error);
}

}  // namespace
}  // namespace infermark::pipeline

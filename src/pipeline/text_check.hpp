// Checks an OCR pipeline's recognised text against the labels of its input images: the
// recogniser's per-step class scores are decoded greedily (CTC: best class per step, repeats
// merged, blanks dropped) into lines, and those lines are compared with the lines each image shows:
// a line is exact when it matches one of them character for character, case kept and spaces
// ignored (PaddleOCR's recognition metric by default); character accuracy is 1 - the edit distance
// between all lines read and all lines shown (each joined in reading order) / characters shown.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "result/result_sections.hpp"

namespace infermark::pipeline {

// Where the truth comes from: a labels file ({"lines": [[line, ...] per image]}, one entry per
// sample of the pipeline's input file, in its order) and the recogniser's symbols (one per line;
// line i is class i + 1, class 0 being CTC's blank).
struct TextCheckSpec {
  std::filesystem::path labels;
  std::filesystem::path characters;
};

nlohmann::json to_json(const TextCheckSpec& spec);

// Greedy CTC decoding of `scores` ([lines, steps, classes], float32): the first `count` lines as
// text. Throws infermark::Error naming the tensor for another dtype or rank, or a class beyond
// `characters`.
std::vector<std::string> decode_text_lines(const Tensor& scores, int count, const std::vector<std::string>& characters);

// Levenshtein distance between two UTF-8 strings, counted in code points.
std::size_t edit_distance(const std::string& a, const std::string& b);

class TextChecker {
 public:
  // Reads both files; throws infermark::Error naming the file and the cause.
  explicit TextChecker(const TextCheckSpec& spec);

  std::size_t samples() const { return labels_.size(); }
  // One finished request: sample `sample` of the input file, its recogniser outputs and the
  // number of lines the detector handed over. Throws infermark::Error for a sample the labels
  // do not cover or outputs it cannot decode.
  void add(std::uint32_t sample, const std::vector<Tensor>& outputs, int lines);
  result::TextCheckRecord record() const;  // the counts so far and the accuracies they give

 private:
  std::vector<std::vector<std::string>> labels_;
  std::vector<std::string> characters_;
  result::TextCheckRecord record_;  // counts and samples; the accuracies are derived in record()
};

}  // namespace infermark::pipeline

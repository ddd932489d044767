// Labels that travel with an input file: `--input NAME=DIR/STEM.npy` may have DIR/STEM.labels.json
// beside it, giving one class index per sample (the file's first axis) and the output whose class
// scores they judge. A run fed such a file reports accuracy against the labels.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace infermark {

struct InputLabels {
  std::string file;                  // the .labels.json read
  std::string output;                // the output holding class scores ("" = the model's first)
  std::vector<std::int64_t> labels;  // one class index per sample
};

// "images.npy" -> "images.labels.json".
std::filesystem::path labels_path(const std::filesystem::path& npy);

// The labels beside `npy`, or nothing when there is no labels file. Throws infermark::Error naming
// the file when it is malformed (not an object, labels not a non-empty list of integers >= 0).
std::optional<InputLabels> read_input_labels(const std::filesystem::path& npy);

// The labels of the first input file (by input name) that has them; at most one may.
std::optional<InputLabels> labels_of_inputs(const std::map<std::string, std::string>& files);

}  // namespace infermark

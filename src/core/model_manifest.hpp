// The zoo's per-model manifest (<model>.json beside the model file, written by tools/zoo): the
// harness reads the value ranges of integer inputs from it, e.g. token ids below the vocabulary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

namespace infermark {

// Half-open [low, high) ranges by input name. Empty when the model has no manifest or it gives
// no ranges; throws infermark::Error naming the manifest when it exists but is malformed.
std::map<std::string, std::pair<std::int64_t, std::int64_t>> read_value_ranges(const std::filesystem::path& model);

// Where the manifest of `model` would be.
std::filesystem::path manifest_path(const std::filesystem::path& model);

}  // namespace infermark

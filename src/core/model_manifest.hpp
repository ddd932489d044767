// The zoo's per-model manifest (<model>.json beside the model file, written by tools/zoo): the
// harness reads the value ranges of integer inputs from it, e.g. token ids below the vocabulary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace infermark {

// Half-open [low, high) ranges by input name. Empty when the model has no manifest or it gives
// no ranges; throws infermark::Error naming the manifest when it exists but is malformed.
std::map<std::string, std::pair<std::int64_t, std::int64_t>> read_value_ranges(const std::filesystem::path& model);

// The manifest's declared tensors ("inputs" or "outputs"): named dimensions become dynamic (-1)
// with their names kept. Empty when there is no manifest; throws infermark::Error when malformed.
// Formats without I/O metadata (TorchScript) take their specs from here.
std::vector<TensorSpec> read_manifest_tensors(const std::filesystem::path& model, const std::string& which);

// The size the manifest records for the file `member` (its file name) of the model folder it lists
// under `format` ("files": {format: {"members": [...]}}). nullopt without a manifest, that entry
// or that member; throws infermark::Error when the manifest is malformed.
std::optional<std::uintmax_t> read_manifest_member_size(const std::filesystem::path& model, const std::string& format,
                                                        const std::string& member);

// Where the manifest of `model` would be.
std::filesystem::path manifest_path(const std::filesystem::path& model);

}  // namespace infermark

// What a model output holds, from the zoo manifest's output spec ("kind"), so agreement with a
// reference backend is judged by the measure that suits it: top-1 for class scores, top-1 per step
// for per-step class scores (OCR), cosine per vector for embeddings, whole-tensor cosine otherwise.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace infermark {

enum class OutputKind { kClassScores, kEmbedding, kSequenceClassScores, kOther };

// The manifest's and result file's names: "class_scores", "embedding", "sequence_class_scores", "other".
std::string_view output_kind_name(OutputKind kind);
// Throws infermark::Error naming `where` and the accepted names when `name` is none of them.
OutputKind parse_output_kind(const std::string& name, const std::string& where);

// Output name -> kind, for the outputs of `model`'s manifest that give one. Empty when there is no
// manifest; throws infermark::Error naming the manifest when it is malformed or a kind is unknown.
std::map<std::string, OutputKind> read_output_kinds(const std::filesystem::path& model);

// The kind of `output` in `kinds`, or none (today's choice by rank then applies).
std::optional<OutputKind> kind_of(const std::map<std::string, OutputKind>& kinds, const std::string& output);

}  // namespace infermark

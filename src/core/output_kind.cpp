#include "core/output_kind.hpp"

#include <array>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/model_manifest.hpp"

namespace infermark {
namespace {

constexpr std::array<std::pair<OutputKind, std::string_view>, 4> kNames{
    {{OutputKind::kClassScores, "class_scores"},
     {OutputKind::kEmbedding, "embedding"},
     {OutputKind::kSequenceClassScores, "sequence_class_scores"},
     {OutputKind::kOther, "other"}}};

}  // namespace

std::string_view output_kind_name(OutputKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "";
}

OutputKind parse_output_kind(const std::string& name, const std::string& where) {
  for (const auto& [kind, text] : kNames)
    if (text == name) return kind;
  throw Error(where + ": output kind '" + name + "' is none of class_scores, embedding, sequence_class_scores, other");
}

std::map<std::string, OutputKind> read_output_kinds(const std::filesystem::path& model) {
  std::map<std::string, OutputKind> kinds;
  const auto path = manifest_path(model);
  std::ifstream in(path);
  if (!in) return kinds;
  try {
    const auto manifest = nlohmann::json::parse(in);
    for (const auto& output : manifest.value("outputs", nlohmann::json::array())) {
      if (!output.contains("kind")) continue;
      const auto name = output.at("name").get<std::string>();
      kinds[name] = parse_output_kind(output.at("kind").get<std::string>(), path.string() + ": outputs." + name);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model manifest: " + e.what());
  }
  return kinds;
}

std::optional<OutputKind> kind_of(const std::map<std::string, OutputKind>& kinds, const std::string& output) {
  const auto it = kinds.find(output);
  return it == kinds.end() ? std::nullopt : std::optional<OutputKind>(it->second);
}

}  // namespace infermark

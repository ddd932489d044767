#include "core/model_manifest.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace infermark {

std::filesystem::path manifest_path(const std::filesystem::path& model) {
  return model.parent_path() / (model.stem().string() + ".json");
}

std::map<std::string, std::pair<std::int64_t, std::int64_t>> read_value_ranges(const std::filesystem::path& model) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> ranges;
  const auto path = manifest_path(model);
  std::ifstream in(path);
  if (!in) return ranges;
  try {
    const auto manifest = nlohmann::json::parse(in);
    for (const auto& input : manifest.value("inputs", nlohmann::json::array())) {
      if (!input.contains("value_range")) continue;
      const auto low = input["value_range"].at(0).get<std::int64_t>();
      const auto high = input["value_range"].at(1).get<std::int64_t>();
      if (high <= low) throw Error("value_range of '" + input.at("name").get<std::string>() + "' is empty");
      ranges[input.at("name").get<std::string>()] = {low, high};
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model manifest: " + e.what());
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  return ranges;
}

}  // namespace infermark

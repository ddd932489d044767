#include "core/model_manifest.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/model_name.hpp"

namespace infermark {

std::filesystem::path manifest_path(const std::filesystem::path& model) {
  return model.parent_path() / (model_name(model) + ".json");
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

std::vector<TensorSpec> read_manifest_tensors(const std::filesystem::path& model, const std::string& which) {
  std::vector<TensorSpec> specs;
  const auto path = manifest_path(model);
  std::ifstream in(path);
  if (!in) return specs;
  try {
    const auto manifest = nlohmann::json::parse(in);
    for (const auto& entry : manifest.value(which, nlohmann::json::array())) {
      TensorSpec spec{entry.at("name"), parse_dtype(entry.at("dtype").get<std::string>()), {}, {}};
      for (const auto& dim : entry.at("shape")) {
        spec.shape.push_back(dim.is_number_integer() ? dim.get<std::int64_t>() : kDynamicDim);
        spec.dim_names.push_back(dim.is_string() ? dim.get<std::string>() : "");
      }
      specs.push_back(std::move(spec));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model manifest: " + e.what());
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  return specs;
}

std::optional<std::uintmax_t> read_manifest_member_size(const std::filesystem::path& model, const std::string& format,
                                                        const std::string& member) {
  const auto path = manifest_path(model);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const auto manifest = nlohmann::json::parse(in);
    const auto files = manifest.value("files", nlohmann::json::object());
    if (!files.contains(format)) return std::nullopt;
    for (const auto& entry : files[format].value("members", nlohmann::json::array()))
      if (std::filesystem::path(entry.at("path").get<std::string>()).filename() == member)
        return entry.at("size").get<std::uintmax_t>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model manifest: " + e.what());
  }
  return std::nullopt;
}

}  // namespace infermark

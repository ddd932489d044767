#include "core/input_labels.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace infermark {

std::filesystem::path labels_path(const std::filesystem::path& npy) {
  return npy.parent_path() / (npy.stem().string() + ".labels.json");
}

std::optional<InputLabels> read_input_labels(const std::filesystem::path& npy) {
  const auto path = labels_path(npy);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  InputLabels labels{path.string(), "", {}};
  try {
    const auto document = nlohmann::json::parse(in);
    if (!document.is_object()) throw Error("expected an object with \"labels\"");
    labels.output = document.value("output", std::string());
    const auto& list = document.at("labels");
    if (!list.is_array() || list.empty()) throw Error("\"labels\" must be a non-empty list of class indices");
    for (const auto& label : list) {
      if (!label.is_number_integer() || label.get<std::int64_t>() < 0)
        throw Error("\"labels\" holds " + label.dump() + "; expected class indices >= 0");
      labels.labels.push_back(label.get<std::int64_t>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed labels file: " + e.what());
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  return labels;
}

std::optional<InputLabels> labels_of_inputs(const std::map<std::string, std::string>& files) {
  std::optional<InputLabels> found;
  for (const auto& [name, file] : files) {
    auto labels = read_input_labels(file);
    if (!labels) continue;
    if (found)
      throw Error("--input " + name + "=" + file + ": another input file has labels too (" + found->file +
                  "); give labels for one input");
    found = std::move(labels);
  }
  return found;
}

}  // namespace infermark

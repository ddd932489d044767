#include "report/zoo_accuracy.hpp"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/model_manifest.hpp"

namespace infermark::report {
namespace {

std::string output_figures(const nlohmann::json& o) {
  std::string text = o.at("output").get<std::string>();
  if (o.contains("top1_agreement")) text += fmt::format(" top-1 {:.1f}%", o["top1_agreement"].get<double>() * 100);
  if (o.contains("top5_agreement")) text += fmt::format(", top-5 {:.1f}%", o["top5_agreement"].get<double>() * 100);
  if (o.contains("threshold_agreement"))
    text += fmt::format(" {:.2f}% of positions alike at {}", o["threshold_agreement"].get<double>() * 100,
                        o["threshold"].get<double>());
  return text + fmt::format("{}cos {:.5f}, max abs err {:.3g}, mean abs err {:.3g}",
                            o.contains("top1_agreement") || o.contains("threshold_agreement") ? ", " : " ",
                            o.at("cosine_mean").get<double>(), o.at("max_abs_error").get<double>(),
                            o.at("mean_abs_error").get<double>());
}

}  // namespace

std::string zoo_accuracy_note(const std::filesystem::path& model) {
  const auto path = manifest_path(model);
  std::ifstream in(path);
  if (!in) return "";
  try {
    const auto manifest = nlohmann::json::parse(in);
    if (!manifest.contains("accuracy")) return "";
    const auto& accuracy = manifest["accuracy"];
    const auto format = model_format(model);
    if (!accuracy.at("by_format").contains(format)) return "";
    const auto& figures = accuracy["by_format"][format];
    std::string outputs;
    for (const auto& o : figures.at("outputs")) outputs += (outputs.empty() ? "" : "; ") + output_figures(o);
    return fmt::format("zoo accuracy of {} against its FP32 original ({}; {}): {}", model.filename().string(),
                       figures.at("runtime").get<std::string>(), accuracy.at("inputs").get<std::string>(), outputs);
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("zoo accuracy of {}: unreadable ({}: {})", model.filename().string(), path.string(), e.what());
  }
}

std::string zoo_accuracy_notes(const std::vector<std::string>& model_paths, const std::string& indent) {
  std::string notes;
  std::set<std::string> seen;
  for (const auto& model : model_paths) {
    if (!seen.insert(model).second) continue;
    if (const auto note = zoo_accuracy_note(model); !note.empty()) notes += indent + note + "\n";
  }
  return notes;
}

}  // namespace infermark::report

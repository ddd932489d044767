#include "report/zoo_accuracy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/model_manifest.hpp"

namespace infermark::report {
namespace {

// One output's figures, in the order the manifest may carry them: agreement of the top class,
// thresholded agreement (probability maps), distribution distance (GGUF: llama-perplexity's KL
// divergence), then element-wise errors.
std::string output_figures(const nlohmann::json& o) {
  std::vector<std::string> parts;
  const auto percent = [&](const char* key) { return o[key].get<double>() * 100; };
  if (o.contains("top1_agreement")) parts.push_back(fmt::format("top-1 {:.1f}%", percent("top1_agreement")));
  if (o.contains("top5_agreement")) parts.push_back(fmt::format("top-5 {:.1f}%", percent("top5_agreement")));
  if (o.contains("threshold_agreement"))
    parts.push_back(
        fmt::format("{:.2f}% of positions alike at {}", percent("threshold_agreement"), o["threshold"].get<double>()));
  if (o.contains("kld_mean"))
    parts.push_back(fmt::format("KL divergence mean {:.3g}, P99 {:.3g}, perplexity ratio {:.4f}", o["kld_mean"].get<double>(),
                                o.at("kld_p99").get<double>(), o.at("ppl_ratio").get<double>()));
  if (o.contains("cosine_mean"))
    parts.push_back(fmt::format("cos {:.5f}, max abs err {:.3g}, mean abs err {:.3g}", o["cosine_mean"].get<double>(),
                                o.at("max_abs_error").get<double>(), o.at("mean_abs_error").get<double>()));
  return fmt::format("{} {}", o.at("output").get<std::string>(), fmt::join(parts, ", "));
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
    return fmt::format("zoo accuracy of {} against {} ({}; {}): {}", model.filename().string(),
                       accuracy.value("against", "its FP32 original"), figures.at("runtime").get<std::string>(),
                       accuracy.at("inputs").get<std::string>(), outputs);
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

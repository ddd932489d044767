#include "result/results_folder.hpp"

#include <cctype>

#include "core/error.hpp"
#include "core/model_name.hpp"

namespace infermark::result {

std::string models_label(const std::vector<std::string>& models) {
  if (models.empty()) return "run";
  const auto extra = models.size() > 1 ? "-and-" + std::to_string(models.size() - 1) + "-more" : std::string();
  return model_name(models.front()) + extra;
}

std::string results_folder_name(const std::string& label, std::time_t started) {
  std::tm tm{};
  localtime_r(&started, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  // A served model's name may be a path or a hub id ("org/model", "/models:file.gguf"): one folder.
  std::string safe = label;
  for (auto& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return std::string(stamp) + "-" + safe;
}

std::filesystem::path create_results_folder(const std::filesystem::path& out, const std::string& label, std::time_t started,
                                            std::string_view flag) {
  const auto base = out / results_folder_name(label, started);
  try {
    std::filesystem::create_directories(out);
    auto folder = base;
    // create_directory is false when the folder exists: another run holds it, so try the next name.
    for (int n = 2; !std::filesystem::create_directory(folder); ++n) folder = base.string() + "-" + std::to_string(n);
    return folder;
  } catch (const std::filesystem::filesystem_error& e) {
    throw Error(std::string(flag) + ": cannot create a results folder in '" + out.string() + "': " + e.code().message());
  }
}

std::filesystem::path stable_results_folder(const std::filesystem::path& out, std::string_view kind, const std::string& name) {
  return out / (std::string(kind) + "-" + name);
}

}  // namespace infermark::result

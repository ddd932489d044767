#include "study/study.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "core/model_name.hpp"
#include "probes/environment.hpp"
#include "result/results_folder.hpp"

namespace infermark::study {
namespace {

bool numeric(const std::string& text) {
  std::size_t used = 0;
  try {
    std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

std::string safe_stem(std::string text) {
  for (auto& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return text;
}

}  // namespace

Study load_study(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot read the study file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_study(text.str(), file);
}

Study parse_study(const std::string& yaml, const std::filesystem::path& file) {
  return parse_study(yaml, file, [] { return probes::capture_environment().physical_cores; });
}

namespace {

// Every combination of the axes' values for one (model, backend), the first axis turning fastest.
void add_axis_cells(const Study& study, StudyCell base, std::vector<StudyCell>& cells) {
  std::vector<std::size_t> index(study.axes.size(), 0);
  for (;;) {
    StudyCell cell = base;
    for (std::size_t a = 0; a < study.axes.size(); ++a) {
      cell.settings.emplace_back(study.axes[a].flag, study.axes[a].values[index[a]]);
      cell.origins.push_back(study.axes[a].origins[index[a]]);
      cell.name += "." + safe_stem(study.axes[a].flag + "-" + study.axes[a].values[index[a]]);
    }
    cells.push_back(std::move(cell));
    std::size_t a = 0;
    while (a < index.size() && ++index[a] == study.axes[a].values.size()) index[a++] = 0;
    if (a == index.size()) break;
  }
}

}  // namespace

// A model's part of its cells' file names: the file's stem, with its format where another model
// of the study has the same stem and a backend in common (resnet50.onnx and resnet50.xml on
// OpenVINO would share a result file; resnet50.onnx and resnet50.pt run on different backends).
std::string model_stem(const std::string& model, const std::vector<std::string>& backends,
                       const std::vector<std::pair<std::string, std::vector<std::string>>>& models_and_backends) {
  const auto stem = model_name(model);
  for (const auto& [other, other_backends] : models_and_backends) {
    if (other == model || model_name(other) != stem) continue;
    for (const auto& b : backends) {
      if (std::find(other_backends.begin(), other_backends.end(), b) == other_backends.end()) continue;
      auto extension = std::filesystem::path(model).extension().string();
      if (!extension.empty()) extension.erase(0, 1);
      return stem + "-" + extension;
    }
  }
  return stem;
}

std::vector<StudyCell> expand(const Study& study, const std::vector<std::string>& available_backends) {
  std::vector<StudyCell> cells;
  // Named backends are taken as given (one not built is reported when the cell runs), each with
  // the models whose format it reads: a study may mix ONNX, OpenVINO IR and TorchScript files.
  std::vector<std::pair<std::string, std::vector<std::string>>> models_and_backends;
  for (const auto& model : study.models) {
    std::vector<std::string> backends;
    for (const auto& b : study.backends.empty() ? available_backends : study.backends)
      if (backend_reads(b, model_format(model))) backends.push_back(b);
    models_and_backends.emplace_back(model, std::move(backends));
  }
  for (const auto& [model, backends] : models_and_backends)
    for (const auto& backend : backends)
      add_axis_cells(study, {model, backend, {}, model_stem(model, backends, models_and_backends) + "." + backend, {}, {}},
                     cells);
  for (const auto& server : study.servers) {
    // "tiny_cnn.remote-kserve-127.0.0.1_8000": the address keeps two servers of one model apart.
    auto address = server.url.substr(server.url.find("://") == std::string::npos ? 0 : server.url.find("://") + 3);
    add_axis_cells(study,
                   {server.url, "remote", {}, safe_stem(server.model + ".remote-" + server.protocol + "-" + address), {}, server},
                   cells);
  }
  return cells;
}

std::string settings_text(const StudyCell& cell) {
  std::string text;
  for (const auto& [flag, value] : cell.settings) text += (text.empty() ? "" : ", ") + flag + "=" + value;
  return text.empty() ? "-" : text;
}

std::vector<SearchAxis> search_axes(const Study& study) {
  std::vector<SearchAxis> axes;
  for (const auto& axis : study.axes)
    axes.push_back({axis.values.size(), std::all_of(axis.values.begin(), axis.values.end(), numeric)});
  return axes;
}

PointScore score_of(const result::RunResult& r) {
  const bool measured = r.status == result::CellStatus::kOk && r.latency_ms && r.throughput.inferences_per_s > 0;
  return {measured, measured ? r.throughput.inferences_per_s : 0, measured ? r.latency_ms->at(99).value : 0};
}

double cell_estimate_s(const loadgen::ScenarioSpec& scenario) {
  constexpr double kLoadingAndWarmupS = 60;
  return loadgen::planned_duration_s(scenario) + kLoadingAndWarmupS;
}

std::filesystem::path study_folder(const std::filesystem::path& out, const Study& study) {
  return result::stable_results_folder(out, "study", study.name);
}

std::string summary_header(const Study& study) {
  return "# Study " + study.name + "\n\n" + (study.description.empty() ? "" : study.description + "\n\n");
}

}  // namespace infermark::study

#include "study/study.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "probes/environment.hpp"

namespace infermark::study {
namespace {

std::vector<std::string> scalars(const YAML::Node& node, const std::string& what, const std::string& file) {
  std::vector<std::string> values;
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) throw Error(file + ": '" + what + "' must be a value or a list of values");
  for (const auto& v : node) values.push_back(v.as<std::string>());
  return values;
}

// "1.5x" means 1.5 times the physical cores (the seed's rule of thumb is written this way).
std::string resolve_multiple_of_cores(const std::string& value) {
  if (value.size() < 2 || value.back() != 'x') return value;
  const double factor = std::stod(value.substr(0, value.size() - 1));
  const int cores = probes::capture_environment().physical_cores;
  return std::to_string(std::max(1, static_cast<int>(std::lround(factor * cores))));
}

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

Error syntax_error(const std::string& where, const YAML::ParserException& e) {
  return Error(where + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
}

Study study_from(const YAML::Node& root, const std::filesystem::path& file) {
  const auto where = file.string();
  if (!root.IsMap()) throw Error(where + ": a study is a YAML mapping with name, models, backends and axes");
  Study study;
  study.file = file;
  study.name = root["name"] ? root["name"].as<std::string>() : file.stem().string();
  study.description = root["description"] ? root["description"].as<std::string>() : "";
  if (!root["models"] && !root["model"]) throw Error(where + ": no 'models' (list of model files)");
  study.models = scalars(root["models"] ? root["models"] : root["model"], "models", where);
  if (root["backends"]) study.backends = scalars(root["backends"], "backends", where);
  for (const auto& b : study.backends) BackendRegistry::check_known(b);
  if (root["base"]) {
    if (!root["base"].IsMap()) throw Error(where + ": 'base' must map run flags to values");
    for (const auto& kv : root["base"]) study.base[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  if (root["axes"]) {
    if (!root["axes"].IsMap()) throw Error(where + ": 'axes' must map run flags to lists of values");
    for (const auto& kv : root["axes"]) {
      StudyAxis axis{kv.first.as<std::string>(), scalars(kv.second, kv.first.as<std::string>(), where)};
      if (axis.values.empty()) throw Error(where + ": axis '" + axis.flag + "' has no values");
      if (axis.flag == "threads") {
        std::vector<std::string> resolved;  // "0.5x" and "1" are one cell on a two-core machine
        for (const auto& v : axis.values)
          if (auto r = resolve_multiple_of_cores(v); std::find(resolved.begin(), resolved.end(), r) == resolved.end())
            resolved.push_back(r);
        axis.values = resolved;
      }
      study.axes.push_back(std::move(axis));
    }
  }
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key != "name" && key != "description" && key != "models" && key != "model" && key != "backends" && key != "base" && key != "axes")
      throw Error(where + ": unknown key '" + key + "' (a study has name, description, models, backends, base, axes)");
  }
  return study;
}

}  // namespace

Study load_study(const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw Error(file.string() + ": cannot read the study file");
  } catch (const YAML::ParserException& e) {
    throw syntax_error(file.string(), e);
  }
  return study_from(root, file);
}

Study parse_study(const std::string& yaml, const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw syntax_error(file.string(), e);
  }
  return study_from(root, file);
}

std::vector<StudyCell> expand(const Study& study, const std::vector<std::string>& available_backends) {
  std::vector<StudyCell> cells;
  for (const auto& model : study.models) {
    std::vector<std::string> backends = study.backends;
    if (backends.empty())
      for (const auto& b : available_backends)
        if (backend_reads(b, model_format(model))) backends.push_back(b);
    for (const auto& backend : backends) {
      // Odometer over the axes' values.
      std::vector<std::size_t> index(study.axes.size(), 0);
      for (;;) {
        StudyCell cell{model, backend, {}, std::filesystem::path(model).stem().string() + "." + backend};
        for (std::size_t a = 0; a < study.axes.size(); ++a) {
          cell.settings.emplace_back(study.axes[a].flag, study.axes[a].values[index[a]]);
          cell.name += "." + safe_stem(study.axes[a].flag + "-" + study.axes[a].values[index[a]]);
        }
        cells.push_back(std::move(cell));
        std::size_t a = 0;
        while (a < index.size() && ++index[a] == study.axes[a].values.size()) index[a++] = 0;
        if (a == index.size()) break;
      }
    }
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

PointScore score_of(const report::RunResult& r) {
  const bool measured = r.status == "ok" && r.latency_ms && r.throughput.inferences_per_s > 0;
  return {measured, measured ? r.throughput.inferences_per_s : 0, measured ? r.latency_ms->at(99).value : 0};
}

double cell_estimate_s(const loadgen::ScenarioSpec& scenario) {
  constexpr double kLoadingAndWarmupS = 60;
  return loadgen::planned_duration_s(scenario) + kLoadingAndWarmupS;
}

std::filesystem::path study_folder(const std::filesystem::path& out, const Study& study) { return out / ("study-" + study.name); }

std::string summary_header(const Study& study) {
  return "# Study " + study.name + "\n\n" + (study.description.empty() ? "" : study.description + "\n\n");
}

}  // namespace infermark::study

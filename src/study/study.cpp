#include "study/study.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "probes/environment.hpp"

namespace infermark::study {
namespace {

// "file:line:column" of a node (1-based), or the file alone where the node has no position.
std::string origin(const std::string& file, const YAML::Node& node) {
  const auto mark = node.Mark();
  if (mark.is_null()) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string scalar(const YAML::Node& node, const std::string& what, const std::string& file) {
  if (!node.IsScalar() && !node.IsNull()) throw Error(origin(file, node) + ": '" + what + "' takes a single value here");
  return node.as<std::string>();
}

struct Values {
  std::vector<std::string> values, origins;
};

Values scalars(const YAML::Node& node, const std::string& what, const std::string& file) {
  if (node.IsScalar()) return {{node.as<std::string>()}, {origin(file, node)}};
  if (!node.IsSequence()) throw Error(origin(file, node) + ": '" + what + "' must be a value or a list of values");
  Values values;
  for (const auto& v : node) {
    values.values.push_back(scalar(v, what, file));
    values.origins.push_back(origin(file, v));
  }
  return values;
}

// "1.5x" means 1.5 times the physical cores (the seed's rule of thumb is written this way).
std::string resolve_multiple_of_cores(const std::string& value, const std::string& origin) {
  if (value.size() < 2 || value.back() != 'x') return value;
  double factor = 0;
  std::size_t used = 0;
  try {
    factor = std::stod(value.substr(0, value.size() - 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used + 1 != value.size() || factor <= 0)
    throw Error(origin + ": threads " + value + ": expected a count or a multiple of the physical cores such as 1.5x");
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
  return Error(where + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
               ": YAML syntax error: " + e.msg);
}

// servers: [{url: http://HOST:PORT, protocol: kserve, model: NAME}, ...]
std::vector<StudyServer> servers(const YAML::Node& node, const std::string& file) {
  if (!node.IsSequence()) throw Error(origin(file, node) + ": 'servers' must be a list of {url, protocol, model}");
  std::vector<StudyServer> out;
  for (const auto& entry : node) {
    if (!entry.IsMap()) throw Error(origin(file, entry) + ": a server is a mapping {url, protocol, model}");
    StudyServer server;
    server.origin = origin(file, entry);
    for (const auto& kv : entry) {
      const auto key = scalar(kv.first, "servers key", file);
      if (key == "url") server.url = scalar(kv.second, "url", file);
      else if (key == "protocol") server.protocol = scalar(kv.second, "protocol", file);
      else if (key == "model") server.model = scalar(kv.second, "model", file);
      else throw Error(origin(file, kv.first) + ": unknown key '" + key + "' (a server has url, protocol, model)");
    }
    if (server.url.empty()) throw Error(server.origin + ": the server has no 'url'");
    out.push_back(std::move(server));
  }
  return out;
}

Study study_from(const YAML::Node& root, const std::filesystem::path& file) {
  const auto where = file.string();
  if (!root.IsMap()) throw Error(where + ": a study is a YAML mapping with name, models, backends and axes");
  for (const auto& kv : root) {
    const auto key = scalar(kv.first, "key", where);
    if (key != "name" && key != "description" && key != "models" && key != "model" && key != "backends" && key != "base" &&
        key != "axes" && key != "servers")
      throw Error(origin(where, kv.first) + ": unknown key '" + key +
                  "' (a study has name, description, models, backends, servers, base, axes)");
  }
  Study study;
  study.file = file;
  study.name = root["name"] ? scalar(root["name"], "name", where) : file.stem().string();
  study.description = root["description"] ? scalar(root["description"], "description", where) : "";
  if (root["servers"]) study.servers = servers(root["servers"], where);
  if (!root["models"] && !root["model"] && study.servers.empty())
    throw Error(where + ": no 'models' (list of model files) and no 'servers'");
  if (root["models"] || root["model"])
    study.models = scalars(root["models"] ? root["models"] : root["model"], "models", where).values;
  if (root["backends"]) {
    const auto backends = scalars(root["backends"], "backends", where);
    for (std::size_t i = 0; i < backends.values.size(); ++i) {
      try {
        BackendRegistry::check_known(backends.values[i]);
      } catch (const Error& e) {
        throw Error(backends.origins[i] + ": " + e.what());
      }
    }
    study.backends = backends.values;
  }
  if (root["base"]) {
    if (!root["base"].IsMap()) throw Error(origin(where, root["base"]) + ": 'base' must map run flags to values");
    for (const auto& kv : root["base"]) {
      const auto flag = scalar(kv.first, "base", where);
      study.base[flag] = scalar(kv.second, flag, where);
      study.base_origins[flag] = origin(where, kv.second);
    }
  }
  if (root["axes"]) {
    if (!root["axes"].IsMap()) throw Error(origin(where, root["axes"]) + ": 'axes' must map run flags to lists of values");
    for (const auto& kv : root["axes"]) {
      const auto flag = scalar(kv.first, "axes", where);
      auto values = scalars(kv.second, flag, where);
      if (values.values.empty()) throw Error(origin(where, kv.second) + ": axis '" + flag + "' has no values");
      StudyAxis axis{flag, {}, {}};
      for (std::size_t i = 0; i < values.values.size(); ++i) {
        // "0.5x" and "1" are one cell on a two-core machine.
        const auto value = flag == "threads" ? resolve_multiple_of_cores(values.values[i], values.origins[i]) : values.values[i];
        if (flag == "threads" && std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) continue;
        axis.values.push_back(value);
        axis.origins.push_back(values.origins[i]);
      }
      study.axes.push_back(std::move(axis));
    }
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

std::vector<StudyCell> expand(const Study& study, const std::vector<std::string>& available_backends) {
  std::vector<StudyCell> cells;
  for (const auto& model : study.models) {
    std::vector<std::string> backends = study.backends;
    if (backends.empty())
      for (const auto& b : available_backends)
        if (backend_reads(b, model_format(model))) backends.push_back(b);
    for (const auto& backend : backends)
      add_axis_cells(study, {model, backend, {}, std::filesystem::path(model).stem().string() + "." + backend, {}, {}}, cells);
  }
  for (const auto& server : study.servers) {
    // "tiny_cnn.remote-kserve-127.0.0.1_8000": the address keeps two servers of one model apart.
    auto address = server.url.substr(server.url.find("://") == std::string::npos ? 0 : server.url.find("://") + 3);
    add_axis_cells(study, {server.url, "remote", {}, safe_stem(server.model + ".remote-" + server.protocol + "-" + address), {},
                           server},
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

PointScore score_of(const report::RunResult& r) {
  const bool measured = r.status == report::CellStatus::kOk && r.latency_ms && r.throughput.inferences_per_s > 0;
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

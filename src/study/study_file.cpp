#include "study/study_file.hpp"

#include <algorithm>
#include <cmath>

#include "backends/declared.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"

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

// "1.5x" means 1.5 times the physical cores (the performance-evaluation guide's rule of thumb is written this way).
std::string resolve_multiple_of_cores(const std::string& value, const std::string& origin,
                                      const std::function<int()>& physical_cores) {
  if (value.size() < 2 || value.back() != 'x') return value;
  double factor = 0;
  std::size_t used = 0;
  try {
    factor = std::stod(value.substr(0, value.size() - 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // NaN, infinities and huge factors too (found by fuzz_study_yaml): they would round to nonsense.
  constexpr double kMostTimesTheCores = 64;
  if (used == 0 || used + 1 != value.size() || !(factor > 0 && factor <= kMostTimesTheCores))
    throw Error(origin + ": threads " + value + ": expected a count or a multiple of the physical cores such as 1.5x");
  const int cores = physical_cores();
  return std::to_string(std::max(1, static_cast<int>(std::lround(factor * cores))));
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
      if (key == "url")
        server.url = scalar(kv.second, "url", file);
      else if (key == "protocol")
        server.protocol = scalar(kv.second, "protocol", file);
      else if (key == "model")
        server.model = scalar(kv.second, "model", file);
      else
        throw Error(origin(file, kv.first) + ": unknown key '" + key + "' (a server has url, protocol, model)");
    }
    if (server.url.empty()) throw Error(server.origin + ": the server has no 'url'");
    out.push_back(std::move(server));
  }
  return out;
}

Study study_from(const YAML::Node& root, const std::filesystem::path& file, const std::function<int()>& physical_cores) {
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
        declared_backends().check_known(backends.values[i]);
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
        const auto value =
            flag == "threads" ? resolve_multiple_of_cores(values.values[i], values.origins[i], physical_cores) : values.values[i];
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

Study parse_study(const std::string& yaml, const std::filesystem::path& file, const std::function<int()>& physical_cores) {
  return study_from(parse_yaml_text(yaml, file.string()), file, physical_cores);
}

}  // namespace infermark::study

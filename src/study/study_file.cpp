#include "study/study_file.hpp"

#include <algorithm>
#include <cmath>

#include "backends/declared.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "study/study_yaml.hpp"

namespace infermark::study {
namespace {

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
  if (root["base"]) read_base(root["base"], where, study.base, study.base_origins);
  if (root["axes"]) study.axes = read_axes(root["axes"], where, physical_cores);
  return study;
}

}  // namespace

Study parse_study(const std::string& yaml, const std::filesystem::path& file, const std::function<int()>& physical_cores) {
  return study_from(parse_yaml_text(yaml, file.string()), file, physical_cores);
}

}  // namespace infermark::study

// Reading user YAML files with errors that name the file, line and field: shared by every
// module that reads one (pipelines, model repositories).
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/error.hpp"

namespace infermark {

// Throws infermark::Error naming the file (unreadable, or the line and column of a syntax error).
// `what` says what the file is, e.g. "pipeline file".
YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what);

// Throws infermark::Error naming `where` and the unknown key, listing the known ones.
void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where);

// `node[key]` as T, or `fallback` when absent; throws infermark::Error naming `where` and the key.
template <typename T>
T yaml_value(const YAML::Node& node, const std::string& key, T fallback, const std::string& where) {
  if (!node[key]) return fallback;
  try {
    return node[key].as<T>();
  } catch (const YAML::Exception&) {
    throw Error(where + ": '" + key + "' has the wrong type (" + YAML::Dump(node[key]) + ")");
  }
}

}  // namespace infermark

// Reading user YAML files with errors that name the file, line and field: shared by every
// module that reads one (pipelines, model repositories).
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/error.hpp"

namespace infermark {

// Throws infermark::Error naming the file (unreadable, or the line and column of a syntax error).
// `what` says what the file is, e.g. "pipeline file".
YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what);

// The same from YAML text; `where` (the file's name) prefixes the line and column of a syntax error.
YAML::Node parse_yaml_text(const std::string& text, const std::string& where);

// A scalar's text (a null reads "null"); throws infermark::Error naming `where` for a list or a
// map, where yaml-cpp would throw its own exception.
std::string yaml_scalar(const YAML::Node& node, const std::string& where);

// `node[key]`, framework options as --opt takes them (a map of scalars); empty when absent.
// Throws infermark::Error naming `where` and the key for anything else.
std::map<std::string, std::string> yaml_options(const YAML::Node& node, const std::string& key, const std::string& where);

// Throws infermark::Error naming `where` and the unknown key, listing the known ones, a key that
// is a list or a map, or a `map` that is a single value or a list (null: no keys).
void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where);

// `node[key]` as T, or `fallback` when absent (or `node` null); throws infermark::Error naming
// `where` and the key.
// A `node` that is a single value or a list (`batching: 8`) is an error too: yaml-cpp's
// operator[] would throw its own exception for it.
template <typename T>
T yaml_value(const YAML::Node& node, const std::string& key, T fallback, const std::string& where) {
  if (!node.IsMap() && !node.IsNull()) throw Error(where + ": expected a mapping with '" + key + "', not " + YAML::Dump(node));
  if (!node[key]) return fallback;
  try {
    return node[key].as<T>();
  } catch (const YAML::Exception&) {
    throw Error(where + ": '" + key + "' has the wrong type (" + YAML::Dump(node[key]) + ")");
  }
}

}  // namespace infermark

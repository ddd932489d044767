#include "core/yaml_fields.hpp"

namespace infermark {
namespace {

Error syntax_error(const std::string& where, const YAML::ParserException& e) {
  return Error(where + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
               ": YAML syntax error: " + e.msg);
}

}  // namespace

YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what) {
  try {
    return YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw Error(file.string() + ": cannot read the " + what);
  } catch (const YAML::ParserException& e) {
    throw syntax_error(file.string(), e);
  }
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& where) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw syntax_error(where, e);
  }
}

std::string yaml_scalar(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar() && !node.IsNull())
    throw Error(where + ": expected a single value, not a list or a map (" + YAML::Dump(node) + ")");
  return node.as<std::string>();
}

std::map<std::string, std::string> yaml_options(const YAML::Node& node, const std::string& key, const std::string& where) {
  std::map<std::string, std::string> options;
  const auto map = node[key];
  if (!map) return options;
  if (!map.IsMap()) throw Error(where + ": '" + key + "' maps framework option keys to values");
  for (const auto& kv : map) options[yaml_scalar(kv.first, where + ": " + key)] = yaml_scalar(kv.second, where + ": " + key);
  return options;
}

void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) {
  // Iterating a list as a map gives yaml-cpp's InvalidNode for every key.
  if (map.IsNull()) return;
  if (!map.IsMap()) throw Error(where + ": expected a mapping of keys to values, not " + YAML::Dump(map));
  for (const auto& kv : map) {
    const auto key = yaml_scalar(kv.first, where + ": a key");
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(where + ": unknown key '" + key + "' (known: " + list + ")");
    }
  }
}

}  // namespace infermark

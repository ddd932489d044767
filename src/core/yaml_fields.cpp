#include "core/yaml_fields.hpp"

namespace infermark {

YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what) {
  try {
    return YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw Error(file.string() + ": cannot read the " + what);
  } catch (const YAML::ParserException& e) {
    throw Error(file.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                ": YAML syntax error: " + e.msg);
  }
}

void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(where + ": unknown key '" + key + "' (known: " + list + ")");
    }
  }
}

}  // namespace infermark

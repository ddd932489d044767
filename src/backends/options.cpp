#include "backends/options.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace infermark {

void check_option_keys(const std::string& backend, const std::map<std::string, std::string>& extras,
                       const std::vector<OptionDoc>& accepted) {
  for (const auto& [key, value] : extras) {
    if (std::any_of(accepted.begin(), accepted.end(), [&](const OptionDoc& o) { return o.key == key; })) continue;
    std::string list;
    for (const auto& a : accepted) list += (list.empty() ? "" : ", ") + a.key;
    throw Error("--opt " + key + "=" + value + ": backend '" + backend + "' has no option '" + key +
                (list.empty() ? "' (it takes no --opt options)" : "' (it accepts: " + list + ")"));
  }
}

std::string option_or(const std::map<std::string, std::string>& extras, const std::string& key, const std::string& fallback) {
  auto it = extras.find(key);
  return it == extras.end() ? fallback : it->second;
}

int parse_count_option(const std::string& backend, const std::string& key, const std::string& value) {
  int parsed = -1;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || parsed < 0)
    throw Error("--opt " + key + "=" + value + ": backend '" + backend + "' expects a whole number >= 0");
  return parsed;
}

bool parse_bool_option(const std::string& backend, const std::string& key, const std::string& value) {
  if (value == "on" || value == "true" || value == "1") return true;
  if (value == "off" || value == "false" || value == "0") return false;
  throw Error("--opt " + key + "=" + value + ": backend '" + backend + "' expects on or off");
}

}  // namespace infermark

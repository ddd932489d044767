#include "core/json_text.hpp"

namespace infermark {

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string valid_utf8(std::string_view text) {
  // nlohmann's replacing serialiser is the one UTF-8 validator in the build; its output is a JSON
  // string literal, parsed back to get the repaired text.
  return nlohmann::json::parse(json_text(nlohmann::json(std::string(text)))).get<std::string>();
}

}  // namespace infermark

#include "core/json_fields.hpp"

namespace infermark {

using nlohmann::json;

const json* json_field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<double> optional_number(const json& j, const char* key) {
  const auto* value = json_field(j, key);
  return value && value->is_number() ? std::optional(value->get<double>()) : std::nullopt;
}

double number(const json& j, const char* key) { return optional_number(j, key).value_or(0.0); }

std::optional<std::uint64_t> optional_count(const json& j, const char* key) {
  const auto* value = json_field(j, key);
  if (!value || !value->is_number()) return std::nullopt;
  try {
    return integer<std::uint64_t>(*value);
  } catch (const json::exception&) {
    return std::nullopt;  // out of range reads as absent, as a mistyped field does
  }
}

std::uint64_t count(const json& j, const char* key) { return optional_count(j, key).value_or(0); }

bool flag(const json& j, const char* key) {
  const auto* value = json_field(j, key);
  return value && value->is_boolean() && value->get<bool>();
}

std::string text(const json& j, const char* key) {
  const auto* value = json_field(j, key);
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace infermark

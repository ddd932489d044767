// Lenient reads of result-file fields: a missing or mistyped field (NaN is written as null) reads
// as its default, so an older or hand-edited file still loads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace infermark {

// `j[key]` when `j` is an object holding it, else nullptr.
const nlohmann::json* json_field(const nlohmann::json& j, const char* key);
std::optional<double> optional_number(const nlohmann::json& j, const char* key);
double number(const nlohmann::json& j, const char* key);  // 0 when absent
std::optional<std::uint64_t> optional_count(const nlohmann::json& j, const char* key);
std::uint64_t count(const nlohmann::json& j, const char* key);  // 0 when absent
bool flag(const nlohmann::json& j, const char* key);             // false when absent
std::string text(const nlohmann::json& j, const char* key);      // "" when absent

}  // namespace infermark

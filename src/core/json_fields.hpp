// Lenient reads of result-file fields: a missing or mistyped field (NaN is written as null) reads
// as its default, so an older or hand-edited file still loads.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infermark {

// `j[key]` when `j` is an object holding it, else nullptr.
const nlohmann::json* json_field(const nlohmann::json& j, const char* key);
std::optional<double> optional_number(const nlohmann::json& j, const char* key);
double number(const nlohmann::json& j, const char* key);  // 0 when absent
std::optional<std::uint64_t> optional_count(const nlohmann::json& j, const char* key);
std::uint64_t count(const nlohmann::json& j, const char* key);  // 0 when absent
bool flag(const nlohmann::json& j, const char* key);            // false when absent
std::string text(const nlohmann::json& j, const char* key);     // "" when absent

// `j` as the integer type T: a JSON integer, or a float whose value truncated fits T. A float out
// of T's range (or NaN) throws nlohmann's out_of_range (406), which the readers' catch turns into
// an error naming the file: nlohmann's own get<T>() casts it, undefined behaviour.
template <typename T>
T integer(const nlohmann::json& j) {
  if (!j.is_number_float()) return j.get<T>();
  const double value = j.get<double>();
  if (!(value > static_cast<double>(std::numeric_limits<T>::min()) - 1.0 &&
        value < static_cast<double>(std::numeric_limits<T>::max()) + 1.0))
    throw nlohmann::json::out_of_range::create(406, "number " + j.dump() + " is out of range for an integer field", &j);
  return static_cast<T>(value);
}

// Every element of the array `j` as integer<T>.
template <typename T>
std::vector<T> integers(const nlohmann::json& j) {
  std::vector<T> out;
  for (const auto& element : j) out.push_back(integer<T>(element));
  return out;
}

// `j[key]` as integer<T>, or `fallback` when `j` has no such key (as nlohmann's value()).
template <typename T>
T integer_or(const nlohmann::json& j, const char* key, T fallback) {
  return j.contains(key) ? integer<T>(j.at(key)) : fallback;
}

}  // namespace infermark

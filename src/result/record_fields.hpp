// Reading a result's typed records from JSON: each field by name, with an error that names the
// field and what it should have been ("remote.requests.completed: expected an integer, got \"x\"").
// Lenient about absence (a field an older file lacks reads as its default), strict about type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_fields.hpp"

namespace infermark::result::detail {

using nlohmann::json;

[[noreturn]] inline void mistyped(const std::string& where, const char* expected, const json& value) {
  auto text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  throw Error(where + ": expected " + expected + ", got " + text);
}

// `value` as T, or an error naming `where` when it is of another kind.
template <typename T>
T as(const json& value, const std::string& where) {
  if constexpr (std::is_same_v<T, json>) {
    return value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) mistyped(where, "a string", value);
    return value.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) mistyped(where, "true or false", value);
    return value.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) mistyped(where, "a number", value);
    return value.get<T>();
  } else {
    static_assert(std::is_integral_v<T>);
    if (!value.is_number()) mistyped(where, "an integer", value);
    if (std::is_unsigned_v<T> && value.is_number_integer() && value.get<std::int64_t>() < 0)
      mistyped(where, "a count (>= 0)", value);
    try {
      return integer<T>(value);
    } catch (const json::exception&) {
      mistyped(where, "an integer in range", value);
    }
  }
}

// The fields of one JSON object, read by name; `where` ("remote.errors") prefixes every error.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) mistyped(where_, "an object", j_);
  }

  std::string path(const char* key) const { return where_ + "." + key; }
  // The field, or nullptr when absent or null.
  const json* find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  template <typename T>
  T get(const char* key, T fallback = T{}) const {
    const auto* v = find(key);
    return v ? as<T>(*v, path(key)) : fallback;
  }
  template <typename T>
  std::optional<T> optional(const char* key) const {
    const auto* v = find(key);
    return v ? std::optional<T>(as<T>(*v, path(key))) : std::nullopt;
  }
  // A nested object's fields (an empty one when absent, so its fields read as defaults).
  Fields object(const char* key) const {
    static const json kEmpty = json::object();
    const auto* v = find(key);
    return Fields(v ? *v : kEmpty, path(key));
  }
  // Each element of an array field (none when absent), read by `read(element, "key[i]")`.
  template <typename Read>
  auto list(const char* key, Read read) const {
    std::vector<decltype(read(std::declval<const json&>(), std::string()))> out;
    const auto* v = find(key);
    if (!v) return out;
    if (!v->is_array()) mistyped(path(key), "a list", *v);
    for (std::size_t i = 0; i < v->size(); ++i) out.push_back(read((*v)[i], path(key) + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::map<std::string, std::uint64_t> counts(const char* key) const {
    std::map<std::string, std::uint64_t> out;
    const auto* v = find(key);
    if (!v) return out;
    if (!v->is_object()) mistyped(path(key), "an object of counts", *v);
    for (const auto& [name, n] : v->items()) out[name] = as<std::uint64_t>(n, path(key) + "." + name);
    return out;
  }
  std::vector<std::string> texts(const char* key) const {
    return list(key, [](const json& v, const std::string& where) { return as<std::string>(v, where); });
  }

 private:
  const json& j_;
  std::string where_;
};

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// Writes `key` only when the value is there (a field older files lack, or one that applies only
// to some results).
template <typename T>
void put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

}  // namespace infermark::result::detail

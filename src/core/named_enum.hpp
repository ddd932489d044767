// One table per closed set: each member's value and name, with the lookups every enum needs
// (name of a value, value of a name with an error naming the flag or field, the choices).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace infermark {

template <typename Enum>
struct NamedValue {
  Enum value;
  std::string_view name;
};

template <typename Enum, std::size_t N>
std::string_view name_in(const NamedValue<Enum> (&table)[N], Enum value) {
  for (const auto& row : table)
    if (row.value == value) return row.name;
  return "?";
}

// "a, b or c"-style list for messages and help texts: "a, b, c".
template <typename Enum, std::size_t N>
std::string choices_in(const NamedValue<Enum> (&table)[N]) {
  std::string choices;
  for (const auto& row : table) choices += (choices.empty() ? "" : ", ") + std::string(row.name);
  return choices;
}

// Throws infermark::Error "`what` `text`: unknown (expected a, b, c)".
template <typename Enum, std::size_t N>
Enum parse_in(const NamedValue<Enum> (&table)[N], const std::string& text, const std::string& what) {
  for (const auto& row : table)
    if (row.name == text) return row.value;
  throw Error(what + " " + text + ": unknown (expected " + choices_in(table) + ")");
}

// Name and value of every member, for flag parsers (CLI11's CheckedTransformer).
template <typename Enum, std::size_t N>
std::vector<std::pair<std::string, Enum>> names_in(const NamedValue<Enum> (&table)[N]) {
  std::vector<std::pair<std::string, Enum>> names;
  for (const auto& row : table) names.emplace_back(row.name, row.value);
  return names;
}

}  // namespace infermark

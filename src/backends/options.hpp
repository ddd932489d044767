// Helpers shared by backends for framework-specific --opt key=value extras: every key must be
// one the backend understands, so a typo is an error instead of a silently ignored setting.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace infermark {

// Throws infermark::Error listing the accepted keys when `extras` has any other key.
void check_option_keys(const std::string& backend, const std::map<std::string, std::string>& extras,
                       const std::vector<OptionDoc>& accepted);

// The value of `key` if present, else `fallback`.
std::string option_or(const std::map<std::string, std::string>& extras, const std::string& key, const std::string& fallback);

// Parses a non-negative integer option value; throws infermark::Error naming backend and key.
int parse_count_option(const std::string& backend, const std::string& key, const std::string& value);

// Parses on/off, true/false, 1/0; throws infermark::Error naming backend and key.
bool parse_bool_option(const std::string& backend, const std::string& key, const std::string& value);

}  // namespace infermark

// The YAML reading shared by study files and evaluation suites (internal to study/): values with
// their "file:line:column", and the base flags and axes both kinds of file write the same way.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "study/study_file.hpp"

namespace infermark::study {

// "file:line:column" of a node (1-based), or the file alone where the node has no position.
std::string origin(const std::string& file, const YAML::Node& node);

// A single value; throws infermark::Error naming `what` and the node's place for a list or map.
std::string scalar(const YAML::Node& node, const std::string& what, const std::string& file);

struct Values {
  std::vector<std::string> values, origins;
};

// A value or a list of values, each with its place.
Values scalars(const YAML::Node& node, const std::string& what, const std::string& file);

// `base:`: run flags to values, merged into `base` (a flag given again replaces the value).
void read_base(const YAML::Node& node, const std::string& file, std::map<std::string, std::string>& base,
               std::map<std::string, std::string>& base_origins);

// `axes:`: run flags to lists of values; threads may be multiples of the physical cores ("1.5x").
std::vector<StudyAxis> read_axes(const YAML::Node& node, const std::string& file, const std::function<int()>& physical_cores);

}  // namespace infermark::study

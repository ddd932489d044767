// Loads every built backend plugin to read its real framework version; shared by
// `infermark backends` and `infermark env`.
#pragma once

#include <string>
#include <vector>

#include "backends/registry.hpp"

namespace infermark::cli {

struct BackendListing {
  std::string name;
  bool built = false;
  BackendInfo info;   // valid when built and loaded
  std::string error;  // why it could not be loaded
};

std::vector<BackendListing> list_backends(const BackendRegistry& registry);

}  // namespace infermark::cli

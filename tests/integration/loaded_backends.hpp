// The framework plugins an integration test program loads: one registry over the build's plugin
// folder, and each backend loaded once, on first use, for every test file of the program.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "backends/registry.hpp"

namespace infermark::test_support {

inline const BackendRegistry& registry() {
  static BackendRegistry r{INFERMARK_PLUGIN_DIR};
  return r;
}

inline Backend& backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<LoadedBackend>> loaded;
  auto& slot = loaded[name];
  if (!slot) slot = registry().load(name);
  return **slot;
}

}  // namespace infermark::test_support

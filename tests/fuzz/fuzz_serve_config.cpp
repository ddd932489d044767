// Model repository files (`infermark serve --config FILE.yaml`): any text parses into a validated
// configuration or is an infermark::Error naming the file, never a crash or another throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "serve/serve_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    const auto config = infermark::serve::parse_serve_config(yaml, "repository/fuzz.yaml");
    (void)config;
  } catch (const infermark::Error&) {}
  return 0;
}

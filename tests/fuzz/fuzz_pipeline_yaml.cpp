// Pipeline files (`infermark pipeline FILE.yaml`): any text parses into a validated pipeline or is
// an infermark::Error naming the file, never a crash or another throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "pipeline/pipeline_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    const auto spec = infermark::pipeline::parse_pipeline(yaml, "fuzz.yaml");
    (void)spec;
  } catch (const infermark::Error&) {}
  return 0;
}

// Study files (`infermark sweep STUDY.yaml`): any text parses into a study or is an
// infermark::Error naming the file, never a crash or another throw (yaml-cpp's own exceptions
// included).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "study/study_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    const auto study = infermark::study::parse_study(yaml, "fuzz.yaml", [] { return 2; });
    (void)study;
  } catch (const infermark::Error&) {}
  return 0;
}

// --shape-range and --shape values ("input=1x3x160-288/32x160-288"): any text parses or is an
// infermark::Error naming it, never a crash or another throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/shape_range.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto range = infermark::parse_shape_range(text, "--shape-range");
    (void)infermark::format_shape_range(range);
  } catch (const infermark::Error&) {}
  return 0;
}

// KServe v2 inference request bodies as `infermark serve` receives them: JSON, or the binary
// tensor extension (JSON header of Inference-Header-Content-Length bytes, then raw tensors). Any
// bytes must end in a parsed request or infermark::Error (a 4xx), never a crash or another throw.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first two bytes: the JSON header's length for the binary extension (0xFFFF: plain JSON).
  const std::size_t declared = static_cast<std::size_t>(data[0]) << 8 | data[1];
  const std::optional<std::size_t> json_length = declared == 0xFFFF ? std::nullopt : std::optional<std::size_t>(declared);
  const std::string_view body(reinterpret_cast<const char*>(data) + 2, size - 2);
  try {
    const auto request = infermark::kserve::parse_infer_request(body, json_length);
    (void)request;
  } catch (const infermark::Error&) {}
  return 0;
}

// ONNX models as the OpenCV backend reads their inputs and outputs (the protobuf wire format,
// decoded by hand): any bytes give a signature or an infermark::Error, never a crash or another
// throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/opencv/onnx_input_reader.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view model(reinterpret_cast<const char*>(data), size);
  try {
    const auto signature = infermark::parse_onnx_signature(model);
    (void)signature;
  } catch (const infermark::Error&) {}
  return 0;
}

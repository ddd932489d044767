// SSE parser (the load client's OpenAI streams): any bytes, split anywhere, must parse without a
// crash, and the events must not depend on how the bytes were split.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "remote/sse_parser.hpp"

namespace {

std::vector<std::string> events(std::string_view bytes, std::size_t piece) {
  infermark::remote::SseParser parser;
  std::vector<std::string> out;
  const auto collect = [&out](std::string_view data) { out.emplace_back(data); };
  for (std::size_t at = 0; at < bytes.size(); at += piece) parser.feed(bytes.substr(at, piece), collect);
  parser.finish(collect);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 7;  // the first byte picks the split
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (events(bytes, piece) != events(bytes, bytes.size() + 1)) std::abort();
  return 0;
}

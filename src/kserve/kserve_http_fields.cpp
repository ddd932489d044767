#include "kserve/kserve_http_fields.hpp"

#include <charconv>

#include "kserve/kserve_codec.hpp"

namespace infermark::kserve {

std::vector<std::string> split_path(std::string_view target) {
  const auto query = target.find('?');
  if (query != std::string_view::npos) target = target.substr(0, query);
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos < target.size()) {
    const auto next = target.find('/', pos);
    const auto part = target.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    if (!part.empty()) parts.emplace_back(part);
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return parts;
}

std::optional<std::size_t> parse_header_length(std::string_view field) {
  if (field.empty()) return std::nullopt;
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size())
    throw RequestError(400, "Inference-Header-Content-Length: '" + std::string(field) + "' is not a byte count");
  return value;
}

}  // namespace infermark::kserve

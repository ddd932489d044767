#include "net/request_parser.hpp"

#include <cstdint>

namespace infermark::net {

void apply_limits(RequestParser& parser, const ServerLimits& limits) {
  parser.body_limit(limits.max_body_bytes);
  parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
}

std::pair<http::status, std::string> refusal(const boost::beast::error_code& ec, const ServerLimits& limits) {
  if (ec == http::error::body_limit)
    return {http::status::payload_too_large,
            "request body larger than the server's limit of " + std::to_string(limits.max_body_bytes) + " bytes"};
  if (ec == http::error::header_limit)
    return {http::status::request_header_fields_too_large,
            "request headers larger than the server's limit of " + std::to_string(limits.max_header_bytes) + " bytes"};
  return {http::status::bad_request, "malformed HTTP request: " + ec.message()};
}

}  // namespace infermark::net

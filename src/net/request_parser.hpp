// The HTTP request parser as `infermark serve` configures it: bounded headers and body, and the
// status and message of a request it refuses. Apart from the server's sockets and timers, so the
// same configuration can be fed bytes directly (tests/fuzz/fuzz_http_request.cpp).
#pragma once

#include <boost/beast/http.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

namespace infermark::net {

namespace http = boost::beast::http;

struct ServerLimits {
  std::size_t max_body_bytes = 64u << 20;    // beyond it: 413
  std::size_t max_header_bytes = 16u << 10;  // beyond it: 431
  std::chrono::seconds read_timeout{30};     // a request must arrive within this once started
  std::chrono::seconds idle_timeout{75};     // a keep-alive connection idle this long is closed
  std::chrono::seconds write_timeout{30};    // a client that will not read is dropped
  // Connections served at once; beyond it a new connection is answered 503 and closed (0: no cap).
  std::size_t max_connections = 0;
};

using RequestParser = http::request_parser<http::string_body>;

// Sets the parser's header and body limits from `limits`.
void apply_limits(RequestParser& parser, const ServerLimits& limits);

// Status and message for a request the parser refused with `ec`; the connection closes after it.
std::pair<http::status, std::string> refusal(const boost::beast::error_code& ec, const ServerLimits& limits);

}  // namespace infermark::net

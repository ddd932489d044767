// The bytes a client sends `infermark serve` on one keep-alive connection: Beast's request parser
// configured as the server configures it (net/request_parser.hpp), request after request, then
// what the KServe v2 front reads before routing (the path's segments, the binary extension's
// header length). Every request parses or is refused with the server's status; nothing crashes or
// throws anything but infermark::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "kserve/kserve_http_fields.hpp"
#include "net/request_parser.hpp"

namespace {

namespace http = infermark::net::http;

// What the routes read from a parsed request.
void interpret(const http::request<http::string_body>& request) {
  const auto target = request.target();
  (void)infermark::kserve::split_path({target.data(), target.size()});
  const auto length = request["Inference-Header-Content-Length"];
  try {
    (void)infermark::kserve::parse_header_length({length.data(), length.size()});
  } catch (const infermark::Error&) {}
  (void)request.keep_alive();
  (void)request.method_string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const infermark::net::ServerLimits limits;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  while (!bytes.empty()) {
    infermark::net::RequestParser parser;
    infermark::net::apply_limits(parser, limits);
    parser.eager(true);  // as http::async_read: the body too, not only the header
    boost::beast::error_code ec;
    while (!bytes.empty() && !parser.is_done()) {
      const auto used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
      bytes.remove_prefix(used);
      if (ec == http::error::need_more) {
        if (used == 0) break;  // a partial request: the connection would wait for more
        ec = {};
      } else if (ec) {
        break;
      }
    }
    if (!parser.is_done() && !ec) parser.put_eof(ec);  // the client closed the connection
    if (ec) {
      (void)infermark::net::refusal(ec, limits);
      return 0;
    }
    if (!parser.is_done()) return 0;
    interpret(parser.get());
  }
  return 0;
}

// Failed requests to a remote server, counted by kind: no answer (connect, timeout, write, read),
// an HTTP error status, or an error reported inside a 200 stream. A result says which, with a few
// of the server's own messages, so "3% errors" can be told apart from "the server was down".
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/http_client.hpp"

namespace infermark::remote {

// The server's own words in an error answer's body, cut to `limit` characters ("..." marks a cut):
// KServe v2's {"error": "..."}, OpenAI's {"error": {"message": "..."}}, a bare "message" or
// FastAPI's "detail", else the body's text with its runs of whitespace made single spaces.
std::string server_message(std::string_view body, std::size_t limit = 300);
// "HTTP 404: model 'm' is not loaded" (the server's message), or "HTTP 404" when the body is empty.
std::string http_error_text(unsigned status, std::string_view body);

class RemoteErrors {
 public:
  void count_transport(net::TransportError error, const std::string& message);
  void count_status(unsigned status, std::string_view body);
  void count_stream_error(const std::string& message);
  // A gRPC call that ended with status `code` (grpc::StatusCode's value).
  void count_grpc(int code, const std::string& message);
  // Counts `response` when it failed (no answer, or a status outside 2xx); false then.
  bool check(const net::ClientResponse& response);

  std::uint64_t total() const;
  // {"total", "transport": {"connect": n, ...}, "http_status": {"500": n}, "grpc_status": {"UNAVAILABLE": n},
  //  "in_stream": n, "examples": [...]}
  nlohmann::json to_json() const;

 private:
  void remember(const std::string& example);  // under mutex_: the first few distinct messages

  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> transport_;
  std::map<std::string, std::uint64_t> status_;
  std::map<std::string, std::uint64_t> grpc_status_;
  std::uint64_t in_stream_ = 0;
  std::vector<std::string> examples_;
};

}  // namespace infermark::remote

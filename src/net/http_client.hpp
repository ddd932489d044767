// HTTP/1.1 client on Boost.Beast with C++20 coroutines, the same stack as the server: a keep-alive
// connection pool shared by a few io threads, many requests in flight at once, a deadline per
// request, and streamed bodies (SSE) delivered piece by piece. Failures come back as typed
// outcomes, never as exceptions: a load generator counts them by kind and carries on.
#pragma once

#include <utility>  // before Asio (see http_server.hpp)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace infermark::net {

// Where a server listens: from "http://host:port[/prefix]".
struct HttpEndpoint {
  std::string host;
  std::string port = "80";
  std::string prefix;  // "" or "/prefix", prepended to every request's target
  std::string url;     // as given, without credentials: what results may record
};

// Throws infermark::Error naming `flag` when `url` is not an http:// URL (https is not supported).
HttpEndpoint parse_http_url(const std::string& url, const std::string& flag);

// Why a request got no HTTP answer (kNone: it did; its status may still be an error).
enum class TransportError { kNone, kConnect, kTimeout, kWrite, kRead };
std::string_view name_of(TransportError error);

struct HttpHeader {
  std::string name;
  std::string value;
};

struct ClientRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target;  // path and query, after the endpoint's prefix
  std::string body;
  std::vector<HttpHeader> headers;
};

// A request rendered to its wire bytes once (request line, headers, body) and sent many times: a
// load generator's fixed requests then cost no serialization per query.
struct PreparedRequest {
  std::string bytes;
};
using PreparedRequestPtr = std::shared_ptr<const PreparedRequest>;

struct ClientResponse {
  TransportError error = TransportError::kNone;
  std::string error_text;  // what the transport said, when error != kNone
  unsigned status = 0;
  std::string body;  // empty when the body was streamed to on_chunk (a 2xx answer's only)
  std::vector<HttpHeader> headers;
  std::string_view header(std::string_view name) const;  // case-insensitive; "" when absent
};

struct ClientOptions {
  int io_threads = 1;
  std::chrono::milliseconds timeout{60'000};  // per request, connect to last byte
  std::vector<HttpHeader> headers;            // sent with every request (e.g. authorization)
};

class HttpClient {
 public:
  // Resolves the host once; throws infermark::Error naming the URL when it cannot.
  HttpClient(HttpEndpoint endpoint, ClientOptions options);
  ~HttpClient();  // finishes the requests in flight (each bounded by the timeout), then stops
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  using Done = std::function<void(ClientResponse)>;
  using Chunk = std::function<void(std::string_view)>;
  // Sends `request` and returns at once. `done` runs exactly once on an io thread (never inside
  // send). With `on_chunk`, a 2xx answer's body is handed over as it arrives instead of collected.
  void send(ClientRequest request, Done done, Chunk on_chunk = {});
  void send(PreparedRequestPtr request, Done done, Chunk on_chunk = {});
  // Renders `request` with this client's host and default headers, for send(PreparedRequestPtr).
  PreparedRequestPtr prepare(ClientRequest request) const;
  // Sends and waits: for set-up requests (metadata), never from an io thread.
  ClientResponse send_and_wait(ClientRequest request);

  const HttpEndpoint& endpoint() const { return endpoint_; }
  std::uint64_t connections_opened() const;

 private:
  struct Connection;
  // Runs on the strand of `idle` (a pooled connection, or null: a new one is opened on a new strand).
  boost::asio::awaitable<void> exchange(std::unique_ptr<Connection> idle, PreparedRequestPtr request, Done done, Chunk on_chunk);
  std::unique_ptr<Connection> take_idle();
  void give_back(std::unique_ptr<Connection> connection);

  HttpEndpoint endpoint_;
  ClientOptions options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::resolver::results_type addresses_;
  mutable std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::uint64_t opened_ = 0;
  std::vector<std::thread> threads_;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
};

}  // namespace infermark::net

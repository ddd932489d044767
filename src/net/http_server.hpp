// HTTP/1.1 server on Boost.Beast with C++20 coroutines: keep-alive, bounded headers and bodies,
// timeouts against slow clients, chunked streaming (SSE), and a graceful drain. Handlers are
// coroutines; slow work belongs on other threads (see await_completion in net/completion.hpp),
// so one io thread never waits on inference.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/request_parser.hpp"

namespace infermark::net {

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// When a connection's current read or write must be done by. A watchdog per connection closes the
// connection once it passes: arming a timer for every read and write (Beast's tcp_stream expiry)
// costs timer syscalls on every request, while moving a deadline is a clock read and a store.
class ConnectionDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  void expires_after(Clock::duration duration) { at_ = Clock::now() + duration; }
  void expires_never() { at_ = Clock::time_point::max(); }
  bool passed(Clock::time_point now) const { return now > at_; }

 private:
  Clock::time_point at_ = Clock::time_point::max();
};

// How a handler answers: once (send) or as a chunked stream (begin_stream, write..., end_stream).
class Responder {
 public:
  // `head_only`: the request was HEAD, so responses carry their headers (Content-Length included) and no body.
  Responder(boost::beast::tcp_stream& stream, ConnectionDeadline& deadline, const ServerLimits& limits, bool keep_alive,
            unsigned version, bool head_only = false)
      : stream_(stream),
        deadline_(deadline),
        limits_(limits),
        keep_alive_(keep_alive),
        version_(version),
        head_only_(head_only) {}

  boost::asio::awaitable<void> send(Response response);
  // Sends the status and headers of `head` with chunked transfer encoding. False: the client left.
  boost::asio::awaitable<bool> begin_stream(Response head);
  boost::asio::awaitable<bool> write(std::string_view chunk);
  boost::asio::awaitable<void> end_stream();

  bool answered() const { return answered_; }
  bool keep_alive() const { return keep_alive_ && !broken_; }
  unsigned status() const { return status_; }

 private:
  boost::beast::tcp_stream& stream_;
  ConnectionDeadline& deadline_;
  const ServerLimits& limits_;
  bool keep_alive_;
  unsigned version_;
  bool head_only_;
  bool answered_ = false;
  bool broken_ = false;
  unsigned status_ = 0;
};

// A handler must answer through the responder; an exception becomes a 500 naming it.
using Handler = std::function<boost::asio::awaitable<void>(Request&, Responder&)>;

// Beast 1.74 speaks boost::string_view; these convert at the edge.
inline std::string_view field_of(const Request& request, std::string_view name) {
  const auto value = request[boost::beast::string_view(name.data(), name.size())];
  return {value.data(), value.size()};
}
inline std::string_view field_of(const Request& request, http::field name) {
  const auto value = request[name];
  return {value.data(), value.size()};
}
inline std::string_view target_of(const Request& request) { return {request.target().data(), request.target().size()}; }

// A plain response with a body and content type (keep-alive is set by the server).
Response make_response(http::status status, std::string body, std::string_view content_type = "application/json");
// {"error": message} with `status`: the KServe v2 error body.
Response error_response(http::status status, std::string_view message);

class HttpServer {
 public:
  // Binds at once (port 0: an ephemeral port; see port()). Throws infermark::Error naming the
  // address when it cannot bind.
  HttpServer(const std::string& host, std::uint16_t port, int io_threads, ServerLimits limits, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const { return port_; }
  void start();
  // Stops accepting, waits until no request is being handled (or `drain` passes), then stops
  // the io threads. Returns the requests still in flight when it gave up (0 after a clean drain).
  std::size_t shutdown(std::chrono::milliseconds drain);

  std::size_t in_flight() const { return in_flight_.load(); }
  std::uint64_t connections_accepted() const { return accepted_.load(); }
  std::size_t connections_open() const { return open_.load(); }

 private:
  // One io_context per io thread: a connection lives on one of them for its whole life, so its
  // reads, handler and writes never hand over to another thread (two wake-ups per request on a
  // shared context: ~60 µs P50 at concurrency 1 here). The acceptor lives on the first.
  struct IoLane {
    IoLane() : io(1) {}  // concurrency hint 1: run by one thread, no wake-ups of idle peers
    boost::asio::io_context io;
    std::atomic<std::size_t> connections{0};
  };
  // The lane with the fewest open connections (long-lived keep-alive connections would pile up
  // unevenly under round-robin when some close early).
  IoLane& least_busy_lane();
  static std::vector<std::unique_ptr<IoLane>> make_lanes(int count);

  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve_connection(boost::asio::ip::tcp::socket socket, IoLane& lane);
  // A connection beyond max_connections: its request's header is read (briefly) and answered 503.
  boost::asio::awaitable<void> refuse_connection(boost::asio::ip::tcp::socket socket);

  std::vector<std::unique_ptr<IoLane>> lanes_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  ServerLimits limits_;
  Handler handler_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::size_t> open_{0};      // connections being served
  std::atomic<std::size_t> refusing_{0};  // connections being answered 503
  std::atomic<bool> stopping_{false};
};

}  // namespace infermark::net

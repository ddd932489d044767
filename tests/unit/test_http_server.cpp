// The HTTP server's per-connection deadlines: a client that stalls mid-request is disconnected
// once its deadline passes (the watchdog cancels the read), and a keep-alive client within its
// deadlines is served on one connection. Correctness only: the bounds below are generous.
#include <gtest/gtest.h>

#include <utility>  // before Asio (see net/http_server.hpp)

#include <boost/asio.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "net/http_server.hpp"

namespace infermark {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

net::HttpServer answering_server(net::ServerLimits limits) {
  return net::HttpServer("127.0.0.1", 0, 1, limits, [](net::Request&, net::Responder& responder) -> asio::awaitable<void> {
    co_await responder.send(net::make_response(boost::beast::http::status::ok, "{}"));
  });
}

net::ServerLimits short_limits() {
  net::ServerLimits limits;
  limits.read_timeout = std::chrono::seconds(1);
  limits.idle_timeout = std::chrono::seconds(1);
  limits.write_timeout = std::chrono::seconds(1);
  return limits;
}

// Reads until the server closes; the seconds it took (or -1 after `give_up_s`).
double seconds_until_closed(tcp::socket& socket, double give_up_s) {
  const auto start = std::chrono::steady_clock::now();
  socket.non_blocking(true);
  char sink[4096];
  for (;;) {
    boost::system::error_code ec;
    socket.read_some(asio::buffer(sink), ec);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ec && ec != asio::error::would_block) return elapsed;  // eof or reset: closed by the server
    if (elapsed > give_up_s) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

TEST(HttpServerDeadlines, AStalledRequestIsDisconnected) {
  auto server = answering_server(short_limits());
  server.start();
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  asio::write(socket, asio::buffer(std::string("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n{\"in")));
  const double closed_after = seconds_until_closed(socket, 20);
  EXPECT_GE(closed_after, 0) << "the stalled connection was still open after 20 s";
  server.shutdown(std::chrono::milliseconds(0));
}

TEST(HttpServerDeadlines, KeepAliveRequestsWithinTheDeadlinesShareOneConnection) {
  auto server = answering_server(short_limits());
  server.start();
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  for (int i = 0; i < 3; ++i) {
    asio::write(socket, asio::buffer(std::string("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")));
    asio::streambuf answer;
    boost::system::error_code ec;
    asio::read_until(socket, answer, "{}", ec);
    ASSERT_FALSE(ec) << "request " << i << ": " << ec.message();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(server.connections_accepted(), 1u);
  server.shutdown(std::chrono::milliseconds(0));
}

}  // namespace infermark

// The HTTP server's per-connection deadlines: a client that stalls mid-request is disconnected
// once its deadline passes (the watchdog cancels the read), and a keep-alive client within its
// deadlines is served on one connection. Requests cut short are answered (408, 400) and
// connections beyond max_connections are refused with 503. Correctness only: the bounds below
// are generous.
#include <gtest/gtest.h>

#include <utility>  // before Asio (see net/http_server.hpp)

#include <boost/asio.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

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

// Everything the server sent until it closed (or `give_up_s` passed).
std::string answer_until_closed(tcp::socket& socket, double give_up_s) {
  const auto start = std::chrono::steady_clock::now();
  socket.non_blocking(true);
  std::string answer;
  char chunk[4096];
  for (;;) {
    boost::system::error_code ec;
    const auto n = socket.read_some(asio::buffer(chunk), ec);
    answer.append(chunk, n);
    if (ec && ec != asio::error::would_block) return answer;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > give_up_s) return answer;
    if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

tcp::socket connected(asio::io_context& io, const net::HttpServer& server) {
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  return socket;
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

TEST(HttpServerAbuse, RequestsCutShortAreAnswered408Or400) {
  auto server = answering_server(short_limits());
  server.start();
  asio::io_context io;
  // Headers that never end: the idle timeout applies to them.
  auto slow_headers = connected(io, server);
  asio::write(slow_headers, asio::buffer(std::string("GET /x HTTP/1.1\r\nHost: h\r\nX-Slow: a")));
  const auto timed_out = answer_until_closed(slow_headers, 20);
  EXPECT_EQ(timed_out.rfind("HTTP/1.1 408 ", 0), 0u) << timed_out;
  EXPECT_NE(timed_out.find("request headers not received within the server's idle timeout of 1 s"), std::string::npos);
  // A body shorter than its Content-Length, then the client stops sending.
  auto short_body = connected(io, server);
  asio::write(short_body, asio::buffer(std::string("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n{}")));
  short_body.shutdown(tcp::socket::shutdown_send);
  const auto cut = answer_until_closed(short_body, 20);
  EXPECT_EQ(cut.rfind("HTTP/1.1 400 ", 0), 0u) << cut;
  EXPECT_NE(cut.find("ended before it was complete"), std::string::npos);
  // A client that connects and leaves without a byte gets nothing.
  auto silent = connected(io, server);
  silent.shutdown(tcp::socket::shutdown_send);
  EXPECT_EQ(answer_until_closed(silent, 20), "");
  server.shutdown(std::chrono::milliseconds(0));
}

// Slowloris clients sending a header byte every millisecond: the server's io thread is busy with
// their reads when the watchdog looks, so its cancel often finds a read between two steps of the
// header parser. Every one must still be cut off with a 408 (a lost cancel left one open for good).
TEST(HttpServerAbuse, FastDrippingHeadersAreCutOffAtTheIdleTimeoutEveryTime) {
  auto server = answering_server(short_limits());
  server.start();
  asio::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < 30; ++i) {
    clients.push_back(connected(io, server));
    asio::write(clients.back(), asio::buffer(std::string("GET /x HTTP/1.1\r\nHost: h\r\nX-Slow: ")));
    clients.back().non_blocking(true);
  }
  std::vector<std::string> answers(clients.size());
  std::vector<bool> open(clients.size(), true);
  std::size_t still_open = clients.size();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (still_open > 0 && std::chrono::steady_clock::now() < give_up) {
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if (!open[i]) continue;
      boost::system::error_code ec;
      char chunk[4096];
      const auto n = clients[i].read_some(asio::buffer(chunk), ec);
      answers[i].append(chunk, n);
      if (ec && ec != asio::error::would_block) {
        open[i] = false;
        --still_open;
        continue;
      }
      asio::write(clients[i], asio::buffer("a", 1), ec);  // fails once the server shut its side: read sees it next
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(still_open, 0u) << still_open << " dripping connections still open after 20 s (idle timeout 1 s)";
  for (std::size_t i = 0; i < answers.size(); ++i)
    EXPECT_EQ(answers[i].rfind("HTTP/1.1 408 ", 0), 0u) << "connection " << i << ": " << answers[i];
  server.shutdown(std::chrono::milliseconds(0));
}

TEST(HttpServerAbuse, ConnectionsBeyondTheCapAreRefusedWith503) {
  auto limits = short_limits();
  limits.idle_timeout = std::chrono::seconds(30);
  limits.max_connections = 2;
  auto server = answering_server(limits);
  server.start();
  asio::io_context io;
  auto first = connected(io, server);
  auto second = connected(io, server);
  for (int i = 0; i < 500 && server.connections_open() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(server.connections_open(), 2u);
  auto third = connected(io, server);
  asio::write(third, asio::buffer(std::string("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")));
  const auto refused = answer_until_closed(third, 20);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503 ", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos);
  EXPECT_NE(refused.find("limit of 2 open connections"), std::string::npos);
  // A connection that leaves frees its place.
  first.close();
  for (int i = 0; i < 500 && server.connections_open() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto fourth = connected(io, server);
  asio::write(fourth, asio::buffer(std::string("GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")));
  const auto served = answer_until_closed(fourth, 20);
  EXPECT_EQ(served.rfind("HTTP/1.1 200 ", 0), 0u) << served;
  server.shutdown(std::chrono::milliseconds(0));
}

}  // namespace infermark

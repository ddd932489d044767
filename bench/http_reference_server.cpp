// The smallest Boost.Beast HTTP/1.1 server that answers every request with 200 and an empty body
// over keep-alive, built the way `infermark serve` is: one io_context per io thread ("io lanes",
// concurrency hint 1), each connection accepted onto the lane with the fewest connections and
// served there. It is the reference `infermark serve`'s HTTP layer is measured against
// (tools/peers/serve_overhead.py): a peer sharing one io_context across threads would pay
// cross-thread wake-ups that serve does not, and flatter serve's ratio.
// Usage: infermark_http_reference_server PORT IO_THREADS
#include <utility>  // before Asio (see src/net/http_server.hpp)

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

struct IoLane {
  IoLane() : io(1) {}
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::atomic<int> connections{0};
};

asio::awaitable<void> serve(tcp::socket socket, IoLane& lane) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  buffer.reserve(64 << 10);  // as infermark serve: request bodies arrive in one read, not 512-byte pieces
  for (;;) {
    http::request<http::string_body> request;
    beast::error_code ec;
    co_await http::async_read(stream, buffer, request, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !request.keep_alive()) break;
  }
  --lane.connections;
}

IoLane& least_busy(std::vector<std::unique_ptr<IoLane>>& lanes) {
  return **std::min_element(lanes.begin(), lanes.end(),
                            [](const auto& a, const auto& b) { return a->connections.load() < b->connections.load(); });
}

asio::awaitable<void> accept(tcp::acceptor& acceptor, std::vector<std::unique_ptr<IoLane>>& lanes) {
  for (;;) {
    auto& lane = least_busy(lanes);
    auto socket = co_await acceptor.async_accept(lane.io, asio::use_awaitable);
    socket.set_option(tcp::no_delay(true));
    ++lane.connections;
    asio::co_spawn(lane.io, serve(std::move(socket), lane), asio::detached);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT IO_THREADS\n", argv[0]);
    return 2;
  }
  std::vector<std::unique_ptr<IoLane>> lanes;
  for (int i = 0; i < std::max(1, std::stoi(argv[2])); ++i) lanes.push_back(std::make_unique<IoLane>());
  auto& accepting = lanes.front()->io;
  tcp::acceptor acceptor(accepting, {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(argv[1]))});
  asio::co_spawn(accepting, accept(acceptor, lanes), asio::detached);
  std::vector<std::thread> threads;
  for (auto& lane : lanes) threads.emplace_back([&io = lane->io] { io.run(); });
  std::printf("listening on http://127.0.0.1:%d\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  for (auto& t : threads) t.join();
}

// The smallest Boost.Beast HTTP/1.1 server that answers every request with 200 and an empty body
// over keep-alive, with the same coroutine style and io-thread count as `infermark serve`: the
// reference its requests/s on a trivial route are measured against (tools/peers/serve_overhead.py).
// Its threads share one io_context, as Beast's examples do (infermark serve runs one per thread).
// Usage: infermark_http_reference_server PORT IO_THREADS
#include <utility>  // before Asio (see src/net/http_server.hpp)

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

asio::awaitable<void> serve(tcp::socket socket) {
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
}

asio::awaitable<void> accept(tcp::acceptor& acceptor) {
  for (;;) {
    auto socket = co_await acceptor.async_accept(asio::use_awaitable);
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), serve(std::move(socket)), asio::detached);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT IO_THREADS\n", argv[0]);
    return 2;
  }
  asio::io_context io;
  tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(argv[1]))});
  asio::co_spawn(io, accept(acceptor), asio::detached);
  std::vector<std::thread> threads;
  for (int i = 0; i < std::stoi(argv[2]); ++i) threads.emplace_back([&io] { io.run(); });
  std::printf("listening on http://127.0.0.1:%d\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  for (auto& t : threads) t.join();
}

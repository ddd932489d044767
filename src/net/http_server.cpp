#include "net/http_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>

#include <algorithm>
#include <memory>
#include <optional>

#include "core/error.hpp"

namespace infermark::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

namespace {

constexpr std::string_view kServerName = "infermark";
constexpr std::uint64_t kBodyReadChunk = 64u << 10;  // the most Beast reads in one call

// Status and message for a request cut short: the client stopped sending (`partial_message`) or the
// watchdog cancelled the read once `allowed` passed (the idle timeout while the headers were read,
// the read timeout for the body). Nothing for other errors (see refusal()).
std::optional<std::pair<http::status, std::string>> unfinished(const beast::error_code& ec, bool headers_done,
                                                               std::chrono::seconds allowed) {
  if (ec == asio::error::operation_aborted)
    return std::pair{http::status::request_timeout, std::string(headers_done ? "request body" : "request headers") +
                                                        " not received within the server's " + (headers_done ? "read" : "idle") +
                                                        " timeout of " + std::to_string(allowed.count()) + " s"};
  if (ec == http::error::partial_message)
    return std::pair{http::status::bad_request, std::string("the request ended before it was complete (a body shorter "
                                                            "than its Content-Length, or a chunked body without its end)")};
  return std::nullopt;
}

// How many connections beyond max_connections may be answered 503 at once; more are closed unanswered.
constexpr std::size_t kRefusalsAtOnce = 64;

// Accept errors that mean "out of descriptors or memory": the connection stays queued in the
// kernel, so the next accept would fail the same way at once unless the server waits a little.
bool out_of_resources(const beast::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

// A connection's deadline and the timer of its watchdog, shared by the two coroutines (on one
// strand) so that whichever ends last frees them.
struct Watch {
  explicit Watch(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;
  ConnectionDeadline deadline;
  bool done = false;  // the connection ended: the watchdog must not touch its socket
};

// How often a watchdog looks: a quarter of the shortest timeout, between 10 ms and 1 s.
std::chrono::milliseconds watchdog_period(const ServerLimits& limits) {
  const auto shortest = std::min({limits.read_timeout, limits.idle_timeout, limits.write_timeout});
  return std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(shortest) / 4, std::chrono::milliseconds(10),
                    std::chrono::milliseconds(1000));
}

// Cancels the connection's pending read or write once its deadline passed; the operation then
// fails and the connection closes, as an expired Beast timer would have made it. It cancels again
// at every look until the connection sets a new deadline: a cancel that finds no operation pending
// (a composed read between two of its reads, its completion queued behind this timer's) is lost,
// and a slow client would then never be cut off.
asio::awaitable<void> watchdog(std::shared_ptr<Watch> watch, beast::tcp_stream& stream, std::chrono::milliseconds period) {
  for (;;) {
    watch->timer.expires_after(period);
    beast::error_code ec;
    co_await watch->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (watch->done) co_return;
    if (watch->deadline.passed(ConnectionDeadline::Clock::now())) stream.socket().cancel(ec);
  }
}

// Feeds the parser what the buffer already holds. A small body usually arrives with its header,
// and an async_read that completes at once still takes a trip through the scheduler (one more
// epoll_wait per request). Parser errors (a body over the limit) come back in `ec`.
void parse_buffered(RequestParser& parser, beast::flat_buffer& buffer, beast::error_code& ec) {
  parser.eager(true);
  while (!parser.is_done() && buffer.size() > 0) {
    const auto used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_more) ec = {};
    if (ec || used == 0) return;
  }
}

bool connection_gone(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted || ec == http::error::partial_message ||
         ec == asio::error::broken_pipe;
}

// Answers `response` and closes. Lingering close: a client still sending its (refused) body would
// get a reset instead of our answer if we closed now, so read and discard for a bounded time and
// amount first.
asio::awaitable<void> answer_and_close(beast::tcp_stream& stream, ConnectionDeadline& deadline, const ServerLimits& limits,
                                       Response response) {
  Responder responder(stream, deadline, limits, false, 11);
  co_await responder.send(std::move(response));
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  deadline.expires_after(std::chrono::seconds(2));
  std::vector<char> sink(64 << 10);
  for (std::size_t discarded = 0; discarded < (64u << 20);) {
    const auto n = co_await stream.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    discarded += n;
  }
}

}  // namespace

std::vector<std::unique_ptr<HttpServer::IoLane>> HttpServer::make_lanes(int count) {
  std::vector<std::unique_ptr<IoLane>> lanes;
  for (int i = 0; i < count; ++i) lanes.push_back(std::make_unique<IoLane>());
  return lanes;
}

Response make_response(http::status status, std::string body, std::string_view content_type) {
  Response response{status, 11};
  response.set(http::field::content_type, std::string(content_type));
  response.body() = std::move(body);
  return response;
}

Response error_response(http::status status, std::string_view message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    escaped += c;
  }
  return make_response(status, "{\"error\":\"" + escaped + "\"}");
}

asio::awaitable<void> Responder::send(Response response) {
  answered_ = true;
  status_ = response.result_int();
  response.version(version_);
  response.set(http::field::server, std::string(kServerName));
  response.keep_alive(keep_alive_);
  response.prepare_payload();
  if (head_only_) response.body().clear();  // Content-Length stays what GET would send
  deadline_.expires_after(limits_.write_timeout);
  beast::error_code ec;
  co_await http::async_write(stream_, response, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) broken_ = true;
}

asio::awaitable<bool> Responder::begin_stream(Response head) {
  answered_ = true;
  status_ = head.result_int();
  http::response<http::empty_body> response{head.result(), version_};
  for (const auto& field : head) response.set(field.name_string(), field.value());
  response.set(http::field::server, std::string(kServerName));
  response.keep_alive(keep_alive_);
  response.chunked(true);
  http::response_serializer<http::empty_body> serializer{response};
  deadline_.expires_after(limits_.write_timeout);
  beast::error_code ec;
  co_await http::async_write_header(stream_, serializer, asio::redirect_error(asio::use_awaitable, ec));
  broken_ = broken_ || static_cast<bool>(ec);
  co_return !broken_;
}

asio::awaitable<bool> Responder::write(std::string_view chunk) {
  if (broken_) co_return false;
  if (chunk.empty()) co_return true;  // an empty chunk would end the stream
  deadline_.expires_after(limits_.write_timeout);
  beast::error_code ec;
  const auto encoded = http::make_chunk(asio::buffer(chunk.data(), chunk.size()));
  co_await asio::async_write(stream_, encoded, asio::redirect_error(asio::use_awaitable, ec));
  broken_ = broken_ || static_cast<bool>(ec);
  co_return !broken_;
}

asio::awaitable<void> Responder::end_stream() {
  if (broken_) co_return;
  deadline_.expires_after(limits_.write_timeout);
  beast::error_code ec;
  const auto last = http::make_chunk_last();
  co_await asio::async_write(stream_, last, asio::redirect_error(asio::use_awaitable, ec));
  broken_ = broken_ || static_cast<bool>(ec);
}

HttpServer::HttpServer(const std::string& host, std::uint16_t port, int io_threads, ServerLimits limits, Handler handler)
    : lanes_(make_lanes(std::max(1, io_threads))), acceptor_(lanes_.front()->io), limits_(limits), handler_(std::move(handler)) {
  beast::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) throw Error("--host " + host + ": not an IP address (" + ec.message() + ")");
  const tcp::endpoint endpoint{address, port};
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
}

HttpServer::~HttpServer() {
  if (!threads_.empty()) shutdown(std::chrono::milliseconds(0));
}

void HttpServer::start() {
  asio::co_spawn(lanes_.front()->io, accept_loop(), asio::detached);
  // A lane with no connection yet must keep running: the work guard holds it until shutdown.
  for (auto& lane : lanes_)
    threads_.emplace_back([&io = lane->io] {
      auto keep_running = asio::make_work_guard(io);
      io.run();
    });
}

HttpServer::IoLane& HttpServer::least_busy_lane() {
  auto* best = lanes_.front().get();
  for (auto& lane : lanes_)
    if (lane->connections.load() < best->connections.load()) best = lane.get();
  return *best;
}

std::size_t HttpServer::shutdown(std::chrono::milliseconds drain) {
  if (!stopping_.exchange(true))
    asio::post(lanes_.front()->io, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
    });
  const auto give_up = std::chrono::steady_clock::now() + drain;
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto left = in_flight_.load();
  for (auto& lane : lanes_) lane->io.stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  return left;
}

asio::awaitable<void> HttpServer::accept_loop() {
  asio::steady_timer pause(lanes_.front()->io);
  while (!stopping_) {
    beast::error_code ec;
    // The socket belongs to its lane, which one thread runs: the connection's coroutines (its
    // requests and its watchdog) never run at the same time, without a strand.
    auto& lane = least_busy_lane();
    auto socket = co_await acceptor_.async_accept(lane.io, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) break;
      if (out_of_resources(ec)) {  // e.g. too many open files: retrying at once would spin
        pause.expires_after(std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    ++accepted_;
    if (limits_.max_connections > 0 && open_.load() >= limits_.max_connections) {
      if (refusing_.load() >= kRefusalsAtOnce) {
        socket.close(ec);
        continue;
      }
      ++refusing_;
      asio::co_spawn(lane.io, refuse_connection(std::move(socket)), asio::detached);
      continue;
    }
    ++open_;
    ++lane.connections;
    asio::co_spawn(lane.io, serve_connection(std::move(socket), lane), asio::detached);
  }
}

asio::awaitable<void> HttpServer::refuse_connection(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::seconds(2));  // the whole refusal, linger included
  beast::flat_buffer buffer;
  http::request_parser<http::empty_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
  beast::error_code ec;
  co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) {
    auto response = error_response(http::status::service_unavailable, "the server is at its limit of " +
                                                                          std::to_string(limits_.max_connections) +
                                                                          " open connections (max_connections); retry later");
    response.set(http::field::retry_after, "1");
    ConnectionDeadline unused;  // the stream's own expiry bounds this connection
    co_await answer_and_close(stream, unused, limits_, std::move(response));
  }
  --refusing_;
}

asio::awaitable<void> HttpServer::serve_connection(tcp::socket socket, IoLane& lane) {
  beast::tcp_stream stream(std::move(socket));
  const auto executor = co_await asio::this_coro::executor;
  auto watch = std::make_shared<Watch>(executor);
  asio::co_spawn(executor, watchdog(watch, stream, watchdog_period(limits_)), asio::detached);
  auto& deadline = watch->deadline;
  beast::flat_buffer buffer;
  for (;;) {
    RequestParser parser;
    apply_limits(parser, limits_);
    beast::error_code ec;
    auto allowed = limits_.idle_timeout;  // the deadline in force, named in a 408
    deadline.expires_after(allowed);
    co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    // A request without a body is complete after its header: no second read, no second timer.
    if (!ec && !parser.is_done()) {
      if (field_of(parser.get(), http::field::expect) == "100-continue") {
        Response go_on{http::status::continue_, parser.get().version()};
        deadline.expires_after(limits_.write_timeout);
        co_await http::async_write(stream, go_on, asio::redirect_error(asio::use_awaitable, ec));
      }
      // Beast reads max(512, free capacity) bytes per call: without room for the body, a 12 KiB
      // tensor took 24 trips through the reactor. Reads are capped at 64 KiB anyway.
      const auto body_bytes = parser.content_length().value_or(kBodyReadChunk);
      buffer.reserve(buffer.size() + static_cast<std::size_t>(std::min<std::uint64_t>(body_bytes, kBodyReadChunk)));
      allowed = limits_.read_timeout;
      deadline.expires_after(allowed);
      if (!ec) parse_buffered(parser, buffer, ec);
      if (!ec && !parser.is_done())
        co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec) {
      // A client leaving between requests (or idle past the timeout) is simply closed; a request
      // cut short or refused is answered, so the client learns why.
      if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe || (connection_gone(ec) && !parser.got_some()))
        break;
      auto cut_short = unfinished(ec, parser.is_header_done(), allowed);
      const auto [status, message] = cut_short ? *cut_short : refusal(ec, limits_);
      auto response = error_response(status, message);
      co_await answer_and_close(stream, deadline, limits_, std::move(response));
      break;
    }
    deadline.expires_never();  // the handler's time is its own; the responder arms writes
    auto request = parser.release();
    // HEAD is answered as GET without the body (clients probe /metrics and health routes with it).
    const bool head_only = request.method() == http::verb::head;
    if (head_only) request.method(http::verb::get);
    Responder responder(stream, deadline, limits_, request.keep_alive() && !stopping_, request.version(), head_only);
    ++in_flight_;
    std::string failure;
    if (stopping_) {
      failure = "";
      auto response = error_response(http::status::service_unavailable, "the server is shutting down");
      response.set(http::field::retry_after, "1");
      co_await responder.send(std::move(response));
    } else {
      try {
        co_await handler_(request, responder);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!responder.answered()) {
        auto response =
            error_response(http::status::internal_server_error,
                           failure.empty() ? std::string("the handler gave no answer") : "internal error: " + failure);
        co_await responder.send(std::move(response));
      }
    }
    --in_flight_;
    if (!responder.keep_alive()) break;
  }
  watch->done = true;
  watch->timer.cancel();
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  --lane.connections;
  --open_;
}

}  // namespace infermark::net

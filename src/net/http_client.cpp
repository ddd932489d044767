#include "net/http_client.hpp"

#include <strings.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <future>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/named_enum.hpp"

namespace infermark::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

TransportError classify(const beast::error_code& ec, TransportError during) {
  return ec == beast::error::timeout ? TransportError::kTimeout : during;
}

// A reused keep-alive connection the server has meanwhile closed fails at once on write or on the
// first read; such a request never reached the server and is retried once on a new connection.
bool closed_by_server(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe;
}

}  // namespace

HttpEndpoint parse_http_url(const std::string& url, const std::string& flag) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind("https://", 0) == 0) throw Error(flag + ": '" + url + "': https is not supported; use http://");
  if (url.rfind(kScheme, 0) != 0) throw Error(flag + ": '" + url + "' is not an http:// URL (e.g. http://127.0.0.1:8000)");
  auto rest = url.substr(kScheme.size());
  const auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  HttpEndpoint endpoint;
  if (slash != std::string::npos) endpoint.prefix = rest.substr(slash);
  while (!endpoint.prefix.empty() && endpoint.prefix.back() == '/') endpoint.prefix.pop_back();
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);  // credentials
  if (authority.empty()) throw Error(flag + ": '" + url + "' names no host");
  if (authority.front() == '[') {  // [IPv6]:port
    const auto close = authority.find(']');
    if (close == std::string::npos) throw Error(flag + ": '" + url + "': unterminated [IPv6] address");
    endpoint.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') endpoint.port = authority.substr(close + 2);
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    endpoint.host = authority.substr(0, colon);
    endpoint.port = authority.substr(colon + 1);
  } else {
    endpoint.host = authority;
  }
  if (endpoint.port.empty() || endpoint.port.find_first_not_of("0123456789") != std::string::npos)
    throw Error(flag + ": '" + url + "': the port is not a number");
  endpoint.url = "http://" + authority + endpoint.prefix;
  return endpoint;
}

namespace {

constexpr NamedValue<TransportError> kTransportErrors[] = {{TransportError::kNone, "none"},
                                                           {TransportError::kConnect, "connect"},
                                                           {TransportError::kTimeout, "timeout"},
                                                           {TransportError::kWrite, "write"},
                                                           {TransportError::kRead, "read"}};

}  // namespace

std::string_view name_of(TransportError error) { return name_in(kTransportErrors, error); }

std::string_view ClientResponse::header(std::string_view name) const {
  for (const auto& h : headers)
    if (h.name.size() == name.size() && strncasecmp(h.name.data(), name.data(), name.size()) == 0) return h.value;
  return {};
}

// A connection's stream runs on a strand, and so does every exchange on it (send() spawns it there):
// with several io threads, the stream's own timeout handler would otherwise run beside the exchange
// that reads, writes or closes the same socket (a data race ThreadSanitizer found).
struct HttpClient::Connection {
  explicit Connection(const asio::any_io_executor& strand) : stream(strand) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;  // bytes read past one response belong to the next
};

HttpClient::HttpClient(HttpEndpoint endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {
  beast::error_code ec;
  tcp::resolver resolver(io_);
  addresses_ = resolver.resolve(endpoint_.host, endpoint_.port, ec);
  if (ec) throw Error(endpoint_.url + ": cannot resolve '" + endpoint_.host + "': " + ec.message());
  work_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(io_.get_executor());
  for (int i = 0; i < std::max(1, options_.io_threads); ++i) threads_.emplace_back([this] { io_.run(); });
}

HttpClient::~HttpClient() {
  work_.reset();  // io_.run() returns once the requests in flight are done
  for (auto& thread : threads_) thread.join();
}

std::uint64_t HttpClient::connections_opened() const {
  std::lock_guard lock(pool_mutex_);
  return opened_;
}

std::unique_ptr<HttpClient::Connection> HttpClient::take_idle() {
  std::lock_guard lock(pool_mutex_);
  if (idle_.empty()) return nullptr;
  auto connection = std::move(idle_.back());
  idle_.pop_back();
  return connection;
}

void HttpClient::give_back(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(pool_mutex_);
  idle_.push_back(std::move(connection));
}

PreparedRequestPtr HttpClient::prepare(ClientRequest request) const {
  http::request<http::string_body> message{request.method, endpoint_.prefix + request.target, 11};
  message.set(http::field::host, endpoint_.host + ":" + endpoint_.port);
  message.set(http::field::user_agent, "infermark");
  message.keep_alive(true);
  for (const auto& h : options_.headers) message.set(h.name, h.value);
  for (const auto& h : request.headers) message.set(h.name, h.value);
  message.body() = std::move(request.body);
  message.prepare_payload();
  std::ostringstream wire;
  wire << message;
  return std::make_shared<const PreparedRequest>(PreparedRequest{std::move(wire).str()});
}

void HttpClient::send(ClientRequest request, Done done, Chunk on_chunk) {
  send(prepare(std::move(request)), std::move(done), std::move(on_chunk));
}

void HttpClient::send(PreparedRequestPtr request, Done done, Chunk on_chunk) {
  auto idle = take_idle();
  const auto strand = idle ? idle->stream.get_executor() : asio::any_io_executor(asio::make_strand(io_));
  asio::co_spawn(strand, exchange(std::move(idle), std::move(request), std::move(done), std::move(on_chunk)), asio::detached);
}

ClientResponse HttpClient::send_and_wait(ClientRequest request) {
  std::promise<ClientResponse> answered;
  auto answer = answered.get_future();
  send(std::move(request), [&answered](ClientResponse response) { answered.set_value(std::move(response)); });
  return answer.get();
}

asio::awaitable<void> HttpClient::exchange(std::unique_ptr<Connection> idle, PreparedRequestPtr request, Done done,
                                           Chunk on_chunk) {
  const auto strand = co_await asio::this_coro::executor;  // new connections share this exchange's strand
  ClientResponse response;
  std::unique_ptr<Connection> connection;
  beast::error_code ec;
  bool streamed_any = false;
  // The retry always opens a new connection: another idle one may have been closed as well.
  for (int attempt = 0; attempt < 2; ++attempt) {
    connection = attempt == 0 ? std::move(idle) : nullptr;
    const bool reused = connection != nullptr;
    if (!connection) {
      connection = std::make_unique<Connection>(strand);
      connection->stream.expires_after(options_.timeout);
      co_await connection->stream.async_connect(addresses_, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        response.error = classify(ec, TransportError::kConnect);
        response.error_text = "connect to " + endpoint_.url + ": " + ec.message();
        break;
      }
      connection->stream.socket().set_option(tcp::no_delay(true), ec);
      std::lock_guard lock(pool_mutex_);
      ++opened_;
    }
    connection->stream.expires_after(options_.timeout);  // one deadline for the whole exchange
    co_await asio::async_write(connection->stream, asio::buffer(request->bytes), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (reused && closed_by_server(ec)) continue;
      response.error = classify(ec, TransportError::kWrite);
      response.error_text = "write: " + ec.message();
      break;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(
        std::numeric_limits<std::uint64_t>::max());  // the server decides what it sends; a load generator takes it all
    co_await http::async_read_header(connection->stream, connection->buffer, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (reused && closed_by_server(ec)) continue;
      response.error = classify(ec, TransportError::kRead);
      response.error_text = "read: " + ec.message();
      break;
    }
    // Only a success is streamed: an error answer's body is kept whole, so its message can be reported.
    const bool streamed = on_chunk && parser.get().result_int() / 100 == 2;
    while (!parser.is_done()) {
      co_await http::async_read_some(connection->stream, connection->buffer, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      if (streamed && !parser.get().body().empty()) {
        streamed_any = true;
        on_chunk(parser.get().body());
        parser.get().body().clear();  // streamed bodies (SSE) are not kept
      }
    }
    if (ec) {
      response.error = classify(ec, TransportError::kRead);
      response.error_text = "read: " + ec.message() + (streamed_any ? " (mid-stream)" : "");
      break;
    }
    auto& answer = parser.get();
    response.status = answer.result_int();
    for (const auto& field : answer) response.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    response.body = std::move(answer.body());
    if (answer.keep_alive()) give_back(std::move(connection));
    break;
  }
  done(std::move(response));
}

}  // namespace infermark::net

// The HTTP server and client under concurrent traffic, for ThreadSanitizer (label `concurrency`,
// docs/sanitizers.md): several io threads on both sides, pooled keep-alive connections, handlers
// that wait for a result produced on another thread (await_completion), streamed answers, and a
// shutdown while requests still arrive. Correctness checks are plain; the races are TSan's to find.
#include <gtest/gtest.h>

#include <utility>  // before Asio (see net/http_server.hpp)

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loadgen/closed_loop.hpp"
#include "loadgen/open_loop.hpp"
#include "net/completion.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "remote/prepared_http_system.hpp"
#include "remote/remote_errors.hpp"

namespace infermark {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

// One thread running queued jobs: stands in for an inference worker.
class Worker {
 public:
  Worker() : thread_([this] { run(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

// /work/N: the body "done N", computed on the worker; /hang: an answer 3 s later; /stream: five
// chunks; anything else: 404.
net::Handler handler_on(Worker& worker) {
  return [&worker](net::Request& request, net::Responder& responder) -> asio::awaitable<void> {
    const std::string target(net::target_of(request));
    if (target.rfind("/work/", 0) == 0) {
      // A named lambda, as src/serve's handlers do: GCC 12 mishandles a lambda temporary with
      // captures inside a co_await expression (it frees the captured string twice).
      auto compute = [&worker, target](std::function<void(std::string)> deliver) {
        worker.post([deliver, target] { deliver("done " + target.substr(6)); });
      };
      auto body = co_await net::await_completion<std::string>(std::move(compute));
      co_await responder.send(net::make_response(http::status::ok, std::move(body), "text/plain"));
    } else if (target == "/hang") {  // answers after any client's timeout in these tests
      asio::steady_timer later(co_await asio::this_coro::executor, std::chrono::seconds(3));
      boost::system::error_code ec;
      co_await later.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      co_await responder.send(net::make_response(http::status::ok, "late", "text/plain"));
    } else if (target == "/stream") {
      if (!co_await responder.begin_stream(net::make_response(http::status::ok, "", "text/event-stream"))) co_return;
      for (int i = 0; i < 5; ++i)
        if (!co_await responder.write("data: " + std::to_string(i) + "\n\n")) co_return;
      co_await responder.end_stream();
    } else {
      co_await responder.send(net::error_response(http::status::not_found, "no such route"));
    }
  };
}

net::HttpClient client_of(const net::HttpServer& server, int io_threads, std::chrono::milliseconds timeout) {
  net::ClientOptions options;
  options.io_threads = io_threads;
  options.timeout = timeout;
  return net::HttpClient(net::parse_http_url("http://127.0.0.1:" + std::to_string(server.port()), "URL"), options);
}

}  // namespace

TEST(NetConcurrency, ManyRequestsFromAThreadedClientToAThreadedServer) {
  auto worker = std::make_unique<Worker>();
  net::HttpServer server("127.0.0.1", 0, 3, net::ServerLimits{}, handler_on(*worker));
  server.start();
  {
    auto client = client_of(server, 3, std::chrono::seconds(30));
    constexpr int kRounds = 6, kInFlight = 40;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::promise<net::ClientResponse>> answers(kInFlight);
      std::vector<std::string> streamed(kInFlight);
      for (int i = 0; i < kInFlight; ++i) {
        auto& answer = answers[static_cast<std::size_t>(i)];
        const auto done = [&answer](net::ClientResponse response) { answer.set_value(std::move(response)); };
        if (i % 4 == 3)  // the chunks of one request arrive in order on one io thread at a time
          client.send({http::verb::get, "/stream", "", {}}, done,
                      [&text = streamed[static_cast<std::size_t>(i)]](std::string_view chunk) { text += chunk; });
        else
          client.send({http::verb::get, "/work/" + std::to_string(round * kInFlight + i), "", {}}, done);
      }
      for (int i = 0; i < kInFlight; ++i) {
        const auto response = answers[static_cast<std::size_t>(i)].get_future().get();
        ASSERT_EQ(response.error, net::TransportError::kNone) << response.error_text;
        EXPECT_EQ(response.status, 200u);
        if (i % 4 == 3)
          EXPECT_EQ(streamed[static_cast<std::size_t>(i)], "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");
        else
          EXPECT_EQ(response.body, "done " + std::to_string(round * kInFlight + i));
      }
    }
    // Keep-alive connections were pooled and reused across rounds, not opened per request.
    EXPECT_LT(client.connections_opened(), static_cast<std::uint64_t>(kRounds * kInFlight));
  }
  EXPECT_EQ(server.shutdown(std::chrono::seconds(5)), 0u);
  worker.reset();  // before the server: its last deliveries post into the server's io_context
}

TEST(NetConcurrency, AServerShutDownWhileRequestsArriveAnswersOrDropsEachOnce) {
  auto worker = std::make_unique<Worker>();
  net::HttpServer server("127.0.0.1", 0, 2, net::ServerLimits{}, handler_on(*worker));
  server.start();
  std::atomic<int> answered{0}, failed{0};
  {
    auto client = client_of(server, 2, std::chrono::seconds(2));
    std::atomic<bool> sending{true};
    std::thread sender([&] {
      for (int i = 0; sending.load(); ++i) {
        client.send({http::verb::get, "/work/" + std::to_string(i), "", {}},
                    [&](net::ClientResponse response) { ++(response.error == net::TransportError::kNone ? answered : failed); });
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    server.shutdown(std::chrono::milliseconds(200));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    sending = false;
    sender.join();
  }  // the client's destructor waits for every request's outcome
  worker.reset();
  EXPECT_GT(answered.load(), 0);
  EXPECT_GT(failed.load(), 0) << "requests after the shutdown must fail (connect refused or dropped)";
}

// Requests that time out, on a client with several io threads: the stream's timeout handler closes
// the socket while the exchange fails and frees the connection. Before each connection had its own
// strand, those two ran on different threads at once (a data race TSan reported).
TEST(NetConcurrency, TimeoutsOnAThreadedClientFailEachRequestOnce) {
  auto worker = std::make_unique<Worker>();
  net::HttpServer server("127.0.0.1", 0, 2, net::ServerLimits{}, handler_on(*worker));
  server.start();
  {
    auto client = client_of(server, 4, std::chrono::milliseconds(100));
    constexpr int kRequests = 32;
    std::vector<std::promise<net::ClientResponse>> answers(kRequests);
    for (auto& answer : answers)
      client.send({http::verb::get, "/hang", "", {}},
                  [&answer](net::ClientResponse response) { answer.set_value(std::move(response)); });
    for (auto& answer : answers) EXPECT_EQ(answer.get_future().get().error, net::TransportError::kTimeout);
  }
  server.shutdown(std::chrono::milliseconds(0));
  worker.reset();
}

// The load generator's asynchronous paths (closed loop's clients, open loop's dispatcher) over
// the HTTP client against the server: completions arrive on the client's io threads.
TEST(NetConcurrency, ClosedAndOpenLoopsOverHttpCountEveryQuery) {
  auto worker = std::make_unique<Worker>();
  net::HttpServer server("127.0.0.1", 0, 2, net::ServerLimits{}, handler_on(*worker));
  server.start();
  {
    auto client = client_of(server, 2, std::chrono::seconds(30));
    remote::RemoteErrors errors;
    remote::PreparedHttpSystem system(client, {client.prepare({http::verb::get, "/work/7", "", {}})},
                                      std::make_unique<loadgen::SingleSample>(), 8, errors);
    loadgen::ClosedLoopConfig closed;
    closed.concurrency = 8;
    closed.max_queries = 400;
    closed.max_duration_s = 120;
    const auto closed_phase = loadgen::run_closed_loop(system, closed);
    EXPECT_EQ(closed_phase.recorder.completed(), 400u);
    EXPECT_EQ(closed_phase.recorder.errors(), 0u);

    loadgen::OpenLoopConfig open;
    open.schedule = {{1.0, 200.0}};  // 1 s at 200 queries/s
    open.lanes = 8;
    open.pacing = loadgen::Pacing::kSleep;
    const auto open_phase = loadgen::run_open_loop(system, open);
    EXPECT_EQ(open_phase.recorder.completed() + open_phase.recorder.errors() + open_phase.recorder.rejected(), open_phase.issued);
    EXPECT_GT(open_phase.recorder.completed(), 0u);
    EXPECT_EQ(errors.total(), 0u) << errors.to_json().dump();
  }
  EXPECT_EQ(server.shutdown(std::chrono::seconds(5)), 0u);
  worker.reset();
}

}  // namespace infermark

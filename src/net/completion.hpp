// Bridges a result produced on another thread (an inference worker) back into a coroutine on the
// io threads, so handlers wait for inference without blocking an io thread.
#pragma once

#include <utility>  // before Asio (see http_server.hpp)

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace infermark::net {

namespace detail {

// Where a result meets its waiter: a result that arrives while `start` is still running (an
// inline execution, or a worker faster than the hand-over) is kept in `early` and returned without
// suspending; a later one resumes the suspended coroutine through `resume`.
template <typename Result>
struct Handoff {
  std::mutex mutex;
  std::optional<Result> early;
  std::function<void(Result)> resume;
};

}  // namespace detail

// `start(deliver)` hands `deliver` to the producer, which must call it exactly once, on any
// thread; the awaiting coroutine resumes on its own executor with the result.
template <typename Result, typename Start>
boost::asio::awaitable<Result> await_completion(Start start) {
  auto executor = co_await boost::asio::this_coro::executor;
  auto handoff = std::make_shared<detail::Handoff<Result>>();
  start(std::function<void(Result)>([handoff](Result result) {
    std::unique_lock lock(handoff->mutex);
    if (!handoff->resume) {
      handoff->early = std::move(result);
      return;
    }
    auto resume = std::move(handoff->resume);
    lock.unlock();
    resume(std::move(result));
  }));
  // Answered during start (the usual case for an inline execution): no suspension, no post, no
  // second trip through the scheduler.
  std::optional<Result> early;
  {
    std::lock_guard lock(handoff->mutex);
    early.swap(handoff->early);
  }
  if (early) co_return std::move(*early);
  auto initiation = [executor, handoff](auto handler) mutable {
    // Shared: std::function needs a copyable target and the coroutine's handler is move-only.
    auto shared = std::make_shared<decltype(handler)>(std::move(handler));
    auto work = std::make_shared<decltype(boost::asio::make_work_guard(executor))>(boost::asio::make_work_guard(executor));
    auto resume = [shared, work, executor](Result result) {
      boost::asio::post(executor, [shared, work, result = std::move(result)]() mutable { (*shared)(std::move(result)); });
    };
    std::unique_lock lock(handoff->mutex);
    if (handoff->early) {  // it arrived between the check above and now
      auto result = std::move(*handoff->early);
      handoff->early.reset();
      lock.unlock();
      resume(std::move(result));
      return;
    }
    handoff->resume = std::move(resume);
  };
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(Result)>(std::move(initiation),
                                                                                                     boost::asio::use_awaitable);
}

}  // namespace infermark::net

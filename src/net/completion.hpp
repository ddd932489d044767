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

namespace infermark::net {

// `start(deliver)` hands `deliver` to the producer, which must call it exactly once, on any
// thread; the awaiting coroutine resumes on its own executor with the result.
template <typename Result, typename Start>
boost::asio::awaitable<Result> await_completion(Start start) {
  auto executor = co_await boost::asio::this_coro::executor;
  auto initiation = [executor, start = std::move(start)](auto handler) mutable {
        // Shared: std::function needs a copyable target and the coroutine's handler is move-only.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        auto work = std::make_shared<decltype(boost::asio::make_work_guard(executor))>(boost::asio::make_work_guard(executor));
        start(std::function<void(Result)>([shared, work, executor](Result result) {
          boost::asio::post(executor, [shared, work, result = std::move(result)]() mutable { (*shared)(std::move(result)); });
        }));
  };
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(Result)>(std::move(initiation),
                                                                                                      boost::asio::use_awaitable);
}

}  // namespace infermark::net

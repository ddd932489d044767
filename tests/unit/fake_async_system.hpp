// An asynchronous system under test with a controlled service time: start() returns at once and a
// completion thread finishes each query when its time is up, as a remote server's client would.
// For testing the load generator's own logic only (never a stand-in for a server).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::testing {

class FakeAsyncSystem final : public loadgen::SystemUnderTest {
 public:
  FakeAsyncSystem(int lanes, std::chrono::microseconds service) : lanes_(lanes), service_(service) {
    completer_ = std::thread([this] { complete_loop(); });
  }
  ~FakeAsyncSystem() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    completer_.join();
  }

  int lanes() const override { return lanes_; }
  const loadgen::SampleLibrary& samples() const override { return *library_; }
  bool asynchronous() const override { return true; }
  void issue(int, const loadgen::Query&, loadgen::Completion&) override { throw std::logic_error("asynchronous only"); }
  void start(const loadgen::Query& query, loadgen::Completion&, std::function<void(bool)> done) override {
    const auto n = started.fetch_add(1);
    const auto service = n == stall_at ? stall : service_;
    {
      std::lock_guard lock(mutex_);
      queries.push_back(query);
      issue_times_ns.push_back(mono_now_ns());
      const auto now_in_flight = ++in_flight_;
      if (now_in_flight > max_in_flight) max_in_flight = now_in_flight;
      due_.emplace(mono_now_ns() + std::chrono::nanoseconds(service).count() + static_cast<std::int64_t>(query.id % 7),
                   Pending{std::move(done), fail_every > 0 && (n + 1) % fail_every == 0});
    }
    wake_.notify_all();
  }

  std::atomic<long> started{0};
  long fail_every = 0;  // every n-th query completes as failed
  long stall_at = -1;   // this query takes `stall` instead
  std::chrono::microseconds stall{0};
  int max_in_flight = 0;                // the most queries started and not yet completed
  std::vector<loadgen::Query> queries;  // in start order, with the times they were started
  std::vector<std::int64_t> issue_times_ns;
  // The samples queries draw from; a single sample unless a test plants groups.
  const loadgen::SampleLibrary* library_ = &single_;
  std::thread::id completion_thread() const { return completer_.get_id(); }

 private:
  struct Pending {
    std::function<void(bool)> done;
    bool fails = false;
  };
  void complete_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (stopping_ && due_.empty()) return;
      if (due_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const auto next = due_.begin()->first;
      if (mono_now_ns() < next) {
        wake_.wait_for(lock, std::chrono::nanoseconds(next - mono_now_ns()));
        continue;
      }
      auto pending = std::move(due_.begin()->second);
      due_.erase(due_.begin());
      --in_flight_;
      lock.unlock();
      pending.done(!pending.fails);
      lock.lock();
    }
  }

  int lanes_;
  std::chrono::microseconds service_;
  loadgen::SingleSample single_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<std::int64_t, Pending> due_;
  int in_flight_ = 0;
  bool stopping_ = false;
  std::thread completer_;
};

}  // namespace infermark::testing

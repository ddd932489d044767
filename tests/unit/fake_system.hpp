// A system under test with controlled service times, for testing the load generator's own
// logic only (never a stand-in for a framework).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <semaphore>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::testing {

class FakeSystem final : public loadgen::SystemUnderTest {
 public:
  FakeSystem(int lanes, std::chrono::microseconds service, int servers = 1024)
      : lanes_(lanes), service_(service), servers_(servers) {}

  int lanes() const override { return lanes_; }
  void issue(int /*lane*/) override {
    const auto n = issued.fetch_add(1);
    {
      std::lock_guard lock(mutex_);
      issue_times_ns.push_back(mono_now_ns());
    }
    if (fail_every > 0 && (n + 1) % fail_every == 0) throw std::runtime_error("planted failure");
    servers_.acquire();  // at most `servers` queries in service at once: a planted capacity limit
    std::this_thread::sleep_for(n == stall_at ? stall : service_);
    servers_.release();
  }

  std::atomic<long> issued{0};
  long fail_every = 0;                          // every n-th query throws
  long stall_at = -1;                           // this query takes `stall` instead
  std::chrono::microseconds stall{0};
  std::vector<std::int64_t> issue_times_ns;

 private:
  int lanes_;
  std::chrono::microseconds service_;
  std::counting_semaphore<1024> servers_;
  std::mutex mutex_;
};

}  // namespace infermark::testing

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
  const loadgen::SampleLibrary& samples() const override { return *library_; }
  void issue(int /*lane*/, const loadgen::Query& query, loadgen::Completion& completion) override {
    const auto n = issued.fetch_add(1);
    {
      std::lock_guard lock(mutex_);
      issue_times_ns.push_back(mono_now_ns());
      queries.push_back(query);
    }
    if (fail_every > 0 && (n + 1) % fail_every == 0) throw std::runtime_error("planted failure");
    servers_.acquire();  // at most `servers` queries in service at once: a planted capacity limit
    const auto group = library_->group_of(query.sample);
    const auto service = n == stall_at ? stall : group < service_by_group.size() ? service_by_group[group] : service_;
    std::this_thread::sleep_for(service);
    servers_.release();
    // A streaming system: `tokens` tokens, the first after the service time, then one per token_gap.
    for (int t = 0; t < tokens; ++t) {
      if (t > 0) std::this_thread::sleep_for(token_gap);
      completion.token_ns.push_back(mono_now_ns());
    }
    completion.prompt_tokens = tokens > 0 ? 16 : 0;
  }

  std::atomic<long> issued{0};
  long fail_every = 0;  // every n-th query throws
  long stall_at = -1;   // this query takes `stall` instead
  std::chrono::microseconds stall{0};
  std::vector<std::int64_t> issue_times_ns;
  std::vector<loadgen::Query> queries;                      // in issue order
  std::vector<std::chrono::microseconds> service_by_group;  // overrides the service time per sample group
  int tokens = 0;                                           // > 0: stream this many tokens per query
  std::chrono::microseconds token_gap{0};
  // The samples queries draw from; a single sample unless a test plants groups.
  const loadgen::SampleLibrary* library_ = &single_;

 private:
  int lanes_;
  std::chrono::microseconds service_;
  std::counting_semaphore<1024> servers_;
  loadgen::SingleSample single_;
  std::mutex mutex_;
};

}  // namespace infermark::testing

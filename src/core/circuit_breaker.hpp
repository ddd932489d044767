// The per-request timeout's circuit breaker: after `trip_after` consecutive timed-out requests it
// opens and new requests are rejected at once; after `cooldown_ms` one trial request is let
// through (half-open) and its outcome closes or re-opens the breaker. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace infermark {

struct BreakerSettings {
  int trip_after = 0;         // consecutive timeouts that open it; 0 = never opens
  double cooldown_ms = 1000;  // how long it stays open before a trial request
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };

std::string_view name_of(BreakerState state);  // "closed", "open", "half-open"
// Throws infermark::Error "`what` `text`: unknown (expected closed, open, half-open)".
BreakerState parse_breaker_state(const std::string& text, const std::string& what);

struct BreakerEvent {
  std::int64_t at_ns = 0;
  BreakerState state = BreakerState::kClosed;  // the state entered
};

class CircuitBreaker {
 public:
  explicit CircuitBreaker(BreakerSettings settings) : settings_(settings) {}

  // Whether a new request may start at `now_ns`; a refusal is counted as rejected.
  bool admit(std::int64_t now_ns);
  // The outcome of an admitted request, completed (or dropped) at `now_ns`.
  void record(bool timed_out, std::int64_t now_ns);
  // An admitted request that never ran (refused further on, e.g. a full queue): no verdict on
  // the service's health; a half-open breaker's trial slot is freed for the next request.
  void release();

  BreakerState state() const;
  int rejected() const;
  int times_opened() const;
  std::vector<BreakerEvent> events() const;
  const BreakerSettings& settings() const { return settings_; }

 private:
  using State = BreakerState;
  void enter(State state, std::int64_t now_ns);

  BreakerSettings settings_;
  mutable std::mutex mutex_;
  State state_ = State::kClosed;
  int consecutive_timeouts_ = 0;
  std::int64_t opened_at_ns_ = 0;
  bool trial_in_flight_ = false;
  int rejected_ = 0;
  int times_opened_ = 0;
  std::vector<BreakerEvent> events_;
};

}  // namespace infermark

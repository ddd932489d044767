#include "core/circuit_breaker.hpp"

#include "core/named_enum.hpp"

namespace infermark {
namespace {

constexpr NamedValue<BreakerState> kStates[] = {
    {BreakerState::kClosed, "closed"}, {BreakerState::kOpen, "open"}, {BreakerState::kHalfOpen, "half-open"}};

}  // namespace

std::string_view name_of(BreakerState state) { return name_in(kStates, state); }

BreakerState parse_breaker_state(const std::string& text, const std::string& what) { return parse_in(kStates, text, what); }

void CircuitBreaker::enter(State state, std::int64_t now_ns) {
  state_ = state;
  events_.push_back({now_ns, state});
  if (state == State::kOpen) {
    opened_at_ns_ = now_ns;
    ++times_opened_;
  }
}

bool CircuitBreaker::admit(std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  if (state_ == State::kOpen && static_cast<double>(now_ns - opened_at_ns_) * 1e-6 >= settings_.cooldown_ms)
    enter(State::kHalfOpen, now_ns);
  if (state_ == State::kClosed) return true;
  if (state_ == State::kHalfOpen && !trial_in_flight_) {
    trial_in_flight_ = true;
    return true;
  }
  ++rejected_;
  return false;
}

void CircuitBreaker::record(bool timed_out, std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  consecutive_timeouts_ = timed_out ? consecutive_timeouts_ + 1 : 0;
  if (state_ == State::kHalfOpen && trial_in_flight_) {
    // Requests admitted before the breaker opened may still finish; only the trial decides.
    trial_in_flight_ = false;
    enter(timed_out ? State::kOpen : State::kClosed, now_ns);
    return;
  }
  if (state_ == State::kClosed && settings_.trip_after > 0 && consecutive_timeouts_ >= settings_.trip_after)
    enter(State::kOpen, now_ns);
}

void CircuitBreaker::release() {
  std::lock_guard lock(mutex_);
  if (state_ == State::kHalfOpen) trial_in_flight_ = false;
}

BreakerState CircuitBreaker::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

int CircuitBreaker::rejected() const {
  std::lock_guard lock(mutex_);
  return rejected_;
}

int CircuitBreaker::times_opened() const {
  std::lock_guard lock(mutex_);
  return times_opened_;
}

std::vector<BreakerEvent> CircuitBreaker::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

}  // namespace infermark

// Monotonic timestamps for every measurement; the wall clock is only used to label results.
#pragma once

#include <chrono>
#include <cstdint>

namespace infermark {

using MonoClock = std::chrono::steady_clock;

inline std::int64_t mono_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(MonoClock::now().time_since_epoch()).count();
}

}  // namespace infermark

#include "cli/stop_signal.hpp"

#include <time.h>

#include <csignal>
#include <cstdint>

namespace infermark::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<std::int64_t> g_first_signal_ns{0};

// Tools such as `timeout` signal the process and then its whole group, so one request to stop
// can arrive twice at once; only a signal a second or more after the first means "stop now".
constexpr std::int64_t kRepeatWindowNs = 1'000'000'000;

std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

extern "C" void on_stop_signal(int signal) {
  const auto now = monotonic_ns();
  if (!g_stop.exchange(true)) {
    g_first_signal_ns.store(now);
    return;
  }
  if (now - g_first_signal_ns.load() < kRepeatWindowNs) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

const std::atomic<bool>& install_stop_handler() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  return g_stop;
}

}  // namespace infermark::cli

#include "cli/stop_signal.hpp"

#include <csignal>

namespace infermark::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int signal) {
  if (g_stop.exchange(true)) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

}  // namespace

const std::atomic<bool>& install_stop_handler() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  return g_stop;
}

}  // namespace infermark::cli

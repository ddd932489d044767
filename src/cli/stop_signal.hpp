// Ctrl-C handling: the first SIGINT/SIGTERM asks the run to stop after the current query so
// everything measured so far is still written (marked interrupted); a second one kills at once.
#pragma once

#include <atomic>

namespace infermark::cli {

const std::atomic<bool>& install_stop_handler();

}  // namespace infermark::cli

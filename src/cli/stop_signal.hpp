// Ctrl-C handling: the first SIGINT/SIGTERM asks the run to stop after the current query so
// everything measured so far is still written (marked interrupted); a second one, a second or more
// later, kills at once (one sent to the process and its group at the same time counts once).
#pragma once

#include <atomic>

namespace infermark::cli {

const std::atomic<bool>& install_stop_handler();

}  // namespace infermark::cli

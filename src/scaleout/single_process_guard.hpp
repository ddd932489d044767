// Commands that measure or serve on one process refuse to be started as several MPI ranks: each
// rank would run the whole command, on the same ports or into the same result folders, and the
// figures would be N unrelated copies. Only `load` and `sweep` know how to share work among ranks.
#pragma once

#include <string_view>

namespace infermark::scaleout {

// Throws infermark::Error naming `command` and what to run instead when an MPI launcher started
// this process as more than one rank; does nothing otherwise (one rank is an ordinary process).
void refuse_several_ranks(std::string_view command);

}  // namespace infermark::scaleout

// How a measured cell ended: the closed set every result, table and exit code reads.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace infermark::result {

enum class CellStatus {
  kOk,           // measured
  kFailed,       // an error (bad input, a framework error), named in the result's error
  kCrashed,      // the worker died (a signal), the stage named
  kTimeout,      // the worker ran past its limit and was stopped
  kMemoryLimit,  // the worker's resident memory went over --memory-limit and it was stopped
  kInterrupted,  // the user stopped it; what was measured until then is kept
};

std::string_view name_of(CellStatus status);
// Throws infermark::Error naming `what` and the choices.
CellStatus parse_cell_status(const std::string& text, const std::string& what = "status");
std::ostream& operator<<(std::ostream& out, CellStatus status);

}  // namespace infermark::result

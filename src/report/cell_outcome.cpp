#include "report/cell_outcome.hpp"

namespace infermark::report {

std::string failure_text(const RunResult& r) {
  if (r.error.empty()) return r.status == "ok" ? "no latency measured" : r.status;
  return r.error.starts_with(r.status) ? r.error : r.status + ": " + r.error;
}

}  // namespace infermark::report

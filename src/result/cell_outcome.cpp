#include "result/cell_outcome.hpp"

namespace infermark::result {

std::string failure_text(const RunResult& r) {
  const std::string status(name_of(r.status));
  if (r.error.empty()) return r.status == CellStatus::kOk ? "no latency measured" : status;
  return r.error.starts_with(status) ? r.error : status + ": " + r.error;
}

}  // namespace infermark::result

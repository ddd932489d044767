// How a cell that did not complete is named in the decision commands' output.
#pragma once

#include <string>

#include "result/run_result.hpp"

namespace infermark::result {

// "crashed: SIGSEGV while running ...", "failed: openvino: ... (while loading the model)": the
// status, then the error unless the error already starts with the status.
std::string failure_text(const RunResult& result);

}  // namespace infermark::result

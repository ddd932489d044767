// What `run` and `sweep` say when a file could not be written (disk full, a file size limit):
// the measurements are still in the printed table, and the exit code is not 0.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/comparison.hpp"

namespace infermark::harness {

// One stderr line per result file not written; `exit_code` becomes at least 1 if there was one.
void report_unsaved_results(const std::vector<CellOutcome>& outcomes, int& exit_code);

// Writes `text` to `path`; false (and a stderr line naming the file and the cause) if it could not.
bool write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace infermark::harness

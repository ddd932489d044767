#include "harness/unsaved_results.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace infermark::harness {

void report_unsaved_results(const std::vector<CellOutcome>& outcomes, int& exit_code) {
  std::size_t unsaved = 0;
  for (const auto& outcome : outcomes)
    if (!outcome.save_error.empty()) {
      fmt::print(stderr, "infermark: {}\n", outcome.save_error);
      ++unsaved;
    }
  if (unsaved == 0) return;
  fmt::print(stderr, "infermark: {} result file(s) not written; their figures are only in the table above\n", unsaved);
  if (exit_code == 0) exit_code = 1;
}

bool write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (out) return true;
  fmt::print(stderr, "infermark: {}: not written: {}\n", path.string(), std::strerror(errno));
  return false;
}

}  // namespace infermark::harness

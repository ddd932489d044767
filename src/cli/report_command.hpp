// `infermark report RESULTS...`: its flags, and the options they fill.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace infermark::cli {

struct ReportOptions {
  std::vector<std::string> results;
  bool markdown = false;  // also the output when neither --csv nor --html is given
  std::string csv_path;   // "-": standard output
  std::string html_path;
};

void define_report_flags(CLI::App& cmd, ReportOptions& options);

}  // namespace infermark::cli

// `infermark report RESULTS...`: Markdown tables (as the field guides tabulate), CSV and a
// self-contained HTML page from result files or folders. Reads only result files, so reports can be rebuilt any time.
#include <fmt/core.h>

#include <fstream>

#include "cli/commands.hpp"
#include "cli/report_command.hpp"
#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"

namespace infermark::cli {
namespace {

void write_file(const std::string& path, const std::string& content, const std::string& flag) {
  std::ofstream out(path);
  if (!out) throw Error(flag + " " + path + ": cannot write this file");
  out << content;
  if (!out) throw Error(flag + " " + path + ": write failed");
}

}  // namespace

void define_report_flags(CLI::App& cmd, ReportOptions& o) {
  cmd.add_option("results", o.results, "Result files or folders (searched recursively)")->required();
  cmd.add_flag("--md", o.markdown, "Print the Markdown tables (the default when no other output is asked for)");
  cmd.add_option("--csv", o.csv_path, "Write one CSV row per cell to this file ('-' for standard output)");
  cmd.add_option("--html", o.html_path, "Write a self-contained HTML report with charts to this file");
}

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Tables (Markdown, CSV) and an HTML page with charts from result files or folders");
  static ReportOptions o;
  define_report_flags(*cmd, o);
  cmd->callback([&exit_code] {
    const auto results = report::load_results(o.results);
    if (o.markdown || (o.csv_path.empty() && o.html_path.empty())) fmt::print("{}", report::markdown_report(results));
    if (o.csv_path == "-")
      fmt::print("{}", report::csv_report(results));
    else if (!o.csv_path.empty())
      write_file(o.csv_path, report::csv_report(results), "--csv");
    if (!o.html_path.empty()) {
      write_file(o.html_path, report::render_html_report(results, report::default_web_dir()), "--html");
      fmt::print(stderr, "infermark: wrote {}\n", o.html_path);
    }
    exit_code = 0;
  });
}

}  // namespace infermark::cli

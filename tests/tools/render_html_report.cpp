// Test helper: renders the HTML report of result files or folders, for the browser test
// (tests/e2e/report_html.test.mjs). Usage: render_html_report OUT.html RESULT_PATH...
// The web/ folder comes from default_web_dir() ($INFERMARK_WEB_DIR first).
#include <fstream>
#include <iostream>

#include "core/error.hpp"
#include "report/html_report.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: render_html_report OUT.html RESULT_PATH...\n";
    return 2;
  }
  try {
    const std::vector<std::string> inputs(argv + 2, argv + argc);
    const auto html =
        infermark::report::render_html_report(infermark::report::load_results(inputs), infermark::report::default_web_dir());
    std::ofstream out(argv[1], std::ios::binary);
    out << html;
    if (!out.flush()) throw infermark::Error(std::string(argv[1]) + ": cannot write the report");
  } catch (const infermark::Error& e) {
    std::cerr << "render_html_report: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

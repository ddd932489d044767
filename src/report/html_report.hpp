// The self-contained HTML report: web/report_template.html with the chart library (from
// web/node_modules) and the results (as JSON, grouped by model) inlined, so the page opens
// offline from a single file and needs no network at view time.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/evaluation_report.hpp"
#include "report/recommend.hpp"
#include "report/result_set.hpp"

namespace infermark::report {

// The whole page. `web_dir` holds report_template.html and node_modules/ (scripts/setup runs
// npm ci there). Throws infermark::Error naming the missing file and the fix.
std::string render_html_report(const std::vector<LoadedResult>& results, const std::filesystem::path& web_dir);

// The page of `infermark evaluate`: a section per experiment (its summary, then its models'
// groups and charts) and the decision at the end.
std::string render_evaluation_html(const EvaluationHeader& header, const std::vector<ExperimentSection>& sections,
                                   const EvaluationDecision& decision, const std::filesystem::path& web_dir);

// Where web/ is: $INFERMARK_WEB_DIR when set, else the first folder named web/ holding
// report_template.html beside or above the executable's folder (build/release/infermark ->
// <repo>/web); when none is found, <exe dir>/../../web, so the error names the expected place.
std::filesystem::path default_web_dir();

}  // namespace infermark::report

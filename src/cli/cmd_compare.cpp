// `infermark compare BASELINE CANDIDATE`: matched cells of two result sets, each metric judged for a
// significant change; exit 1 with --fail-on-regression when a regression exceeds the threshold.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/compare_command.hpp"
#include "cli/run_flags.hpp"
#include "core/json_text.hpp"
#include "report/compare.hpp"

namespace infermark::cli {

void define_compare_flags(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("baseline", o.baseline, "Baseline result file or folder")->required();
  cmd.add_option("candidate", o.candidate, "Candidate result file or folder")->required();
  cmd.add_option_function<double>(
         "--fail-on-regression", [&o](double pct) { o.fail_on_regression_pct = pct; },
         "Exit 1 when a metric regresses significantly by more than PCT percent (also the practical threshold)")
      ->check(above_zero());
  cmd.add_option("--alpha", o.settings.alpha, "Significance level of the tests")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd.add_option("--threshold", o.settings.threshold_pct, "Smallest change in percent that counts (without --fail-on-regression)")
      ->check(not_negative())
      ->capture_default_str();
  cmd.add_option("--resamples", o.settings.bootstrap_resamples, "Bootstrap resamples")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  cmd.add_option("--seed", o.settings.seed, "Bootstrap seed")->capture_default_str();
  cmd.add_flag("--json", o.as_json, "Print JSON instead of Markdown");
  // The gate's percentage is the practical threshold too, whatever --threshold says.
  cmd.parse_complete_callback([&o] {
    if (o.fail_on_regression_pct) o.settings.threshold_pct = *o.fail_on_regression_pct;
  });
}

void add_compare_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compare", "Compare a candidate's results with a baseline's: regressions with significance");
  static CompareOptions o;
  define_compare_flags(*cmd, o);
  cmd->callback([&exit_code] {
    const auto comparison =
        report::compare_results(report::load_results({o.baseline}), report::load_results({o.candidate}), o.settings);
    fmt::print("{}", o.as_json ? json_text(report::to_json(comparison), 2) + "\n" : report::to_markdown(comparison));
    exit_code = o.fail_on_regression_pct && comparison.regressions() > 0 ? 1 : 0;
  });
}

}  // namespace infermark::cli

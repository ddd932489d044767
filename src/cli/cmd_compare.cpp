// `infermark compare BASELINE CANDIDATE`: matched cells of two result sets, each metric judged for a
// significant change; exit 1 with --fail-on-regression when a regression exceeds the threshold.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "core/json_text.hpp"
#include "report/compare.hpp"

namespace infermark::cli {
namespace {

struct CompareCommandOptions {
  std::string baseline, candidate;
  double fail_on_regression_pct = 0;
  report::CompareSettings settings;
  bool as_json = false;
};

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compare", "Compare a candidate's results with a baseline's: regressions with significance");
  static CompareCommandOptions o;
  cmd->add_option("baseline", o.baseline, "Baseline result file or folder")->required();
  cmd->add_option("candidate", o.candidate, "Candidate result file or folder")->required();
  auto* fail =
      cmd->add_option("--fail-on-regression", o.fail_on_regression_pct,
                      "Exit 1 when a metric regresses significantly by more than PCT percent (also the practical threshold)")
          ->check(above_zero());
  cmd->add_option("--alpha", o.settings.alpha, "Significance level of the tests")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd->add_option("--threshold", o.settings.threshold_pct,
                  "Smallest change in percent that counts (without --fail-on-regression)")
      ->check(not_negative())
      ->capture_default_str();
  cmd->add_option("--resamples", o.settings.bootstrap_resamples, "Bootstrap resamples")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", o.settings.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_flag("--json", o.as_json, "Print JSON instead of Markdown");
  cmd->callback([&exit_code, fail] {
    const bool gate = fail->count() > 0;
    if (gate) o.settings.threshold_pct = o.fail_on_regression_pct;
    const auto comparison =
        report::compare_results(report::load_results({o.baseline}), report::load_results({o.candidate}), o.settings);
    fmt::print("{}", o.as_json ? json_text(report::to_json(comparison), 2) + "\n" : report::to_markdown(comparison));
    exit_code = gate && comparison.regressions() > 0 ? 1 : 0;
  });
}

}  // namespace infermark::cli

// `infermark sweep STUDY.yaml`: runs every cell of a study, each isolated in a worker, into a
// stable folder so an interrupted sweep resumes where it stopped; writes a summary at the end.
#include <fmt/core.h>

#include <fstream>

#include "cli/commands.hpp"
#include "cli/stop_signal.hpp"
#include "cli/study.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "report/markdown_report.hpp"
#include "report/study_summary.hpp"

namespace infermark::cli {
namespace {

struct SweepOptions {
  std::string study_file;
  std::string out = "results";
  bool dry_run = false;
  bool fresh = false;
  double max_duration_s = 0;  // 0: no limit
};

// Upper bound of one cell's time: the scenario's planned length plus loading and warm-up.
constexpr double kCellOverheadS = 60;

std::string settings_text(const StudyCell& cell) {
  std::string text;
  for (const auto& [flag, value] : cell.settings) text += (text.empty() ? "" : ", ") + flag + "=" + value;
  return text.empty() ? "-" : text;
}

int sweep(const SweepOptions& o) {
  const auto study = load_study(o.study_file);
  const BackendRegistry registry(default_plugin_dir());
  const auto cells = expand(study, registry.available());
  if (cells.empty()) throw Error(o.study_file + ": the study has no cells (no built backend reads its models?)");

  harness::ComparisonPlan plan;
  double estimate_s = 0;
  for (const auto& cell : cells) {
    const auto options = cell_options(study, cell);  // validates every cell before anything runs
    if (!registry.is_available(cell.backend)) throw Error(o.study_file + ": backend '" + cell.backend + "' is not built into this infermark");
    plan.cells.push_back(to_cell(options, cell.backend, thread_counts(options).front()));
    plan.cell_names.push_back(cell.name);
    estimate_s += loadgen::planned_duration_s(options.scenario) + kCellOverheadS;
  }
  fmt::print("study {}: {} cells ({} models x backends x axes), at most ~{:.0f} min\n", study.name, cells.size(),
             study.models.size(), estimate_s / 60);
  if (o.dry_run) {
    for (const auto& cell : cells) fmt::print("  {:<14} {:<28} {}\n", cell.backend, cell.model, settings_text(cell));
    return 0;
  }
  if (o.max_duration_s > 0 && estimate_s > o.max_duration_s)
    throw Error(fmt::format("{}: the matrix could take up to {:.0f} s, more than --max-duration {:.0f} s; trim the axes",
                            o.study_file, estimate_s, o.max_duration_s));

  const auto& stop = install_stop_handler();
  plan.output_dir = std::filesystem::path(o.out) / ("study-" + study.name);
  plan.resume = !o.fresh;
  plan.cell_timeout_s = 0;
  for (const auto& cell : plan.cells) plan.cell_timeout_s = std::max(plan.cell_timeout_s, loadgen::planned_duration_s(cell.scenario) + 600);
  plan.worker_argv = worker_argv;
  std::size_t done = 0;
  const auto outcomes = harness::run_comparison(plan, registry, stop, [&](const harness::CellOutcome& outcome) {
    const auto& cell = cells[done++];
    fmt::print("[{}/{}] {:<14} {:<40} {}\n", done, cells.size(), outcome.result.backend.name, settings_text(cell), outcome.result.status);
    std::fflush(stdout);
  });

  std::vector<report::LoadedResult> results;
  for (const auto& outcome : outcomes) results.push_back({outcome.result, outcome.result_path.string()});
  std::vector<std::string> axis_flags;
  for (const auto& axis : study.axes) axis_flags.push_back(axis.flag);
  const auto summary = "# Study " + study.name + "\n\n" + (study.description.empty() ? "" : study.description + "\n\n") +
                       report::study_summary(results, axis_flags) + report::markdown_report(results);
  std::ofstream(plan.output_dir / "summary.md") << summary;
  fmt::print("\n{}\nresults and summary.md: {}\n", summary, plan.output_dir.string());
  if (stop.load()) {
    fmt::print(stderr, "infermark: interrupted; rerun the same command to resume\n");
    return 130;
  }
  for (const auto& outcome : outcomes)
    if (outcome.result.status != "ok") return 1;
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("sweep", "Run a study: every combination of its axes, isolated and resumable");
  static SweepOptions options;
  cmd->add_option("study", options.study_file, "Study YAML file (see studies/)")->required();
  cmd->add_option("--out", options.out, "Folder for the study's results (a study-<name> folder inside)")->capture_default_str();
  cmd->add_flag("--dry-run", options.dry_run, "Print the matrix and an upper bound of its duration; run nothing");
  cmd->add_flag("--fresh", options.fresh, "Measure every cell again instead of resuming");
  cmd->add_option("--max-duration", options.max_duration_s, "Refuse a matrix that could take longer than this (s)")
      ->check(above_zero());
  cmd->callback([&exit_code] { exit_code = sweep(options); });
}

}  // namespace infermark::cli

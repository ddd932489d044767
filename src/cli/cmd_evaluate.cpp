// `infermark evaluate [SUITE]`: the whole framework evaluation in one command. Builds the zoo
// models the suite needs, runs each experiment (a study or a pipeline, resumable, each cell in its
// own worker) into one folder, and writes evaluation.md and report.html: a section per experiment
// and the decision at the end. `--quick` runs each experiment's reduced form.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/evaluation_plan.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "cli/zoo_command.hpp"
#include "core/error.hpp"
#include "core/text_file.hpp"
#include "harness/unsaved_results.hpp"
#include "process/child_process.hpp"
#include "report/evaluation_report.hpp"
#include "report/html_report.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct EvaluateOptions {
  std::string suite;  // "": the repository's studies/evaluation/suite.yaml
  std::string out = "results";
  bool quick = false;
  bool fresh = false;
  bool dry_run = false;
  double memory_limit_mb = 0;
};

// A zoo model export can take minutes (BERT, CLIP); a hung exporter must not hang the evaluation.
constexpr double kZooBuildTimeoutS = 1800;

fs::path default_suite() {
  const auto suite = zoo_directory().parent_path().parent_path() / "studies" / "evaluation" / "suite.yaml";
  if (!fs::exists(suite)) throw Error(suite.string() + ": the default evaluation suite is missing; name a suite file");
  return suite;
}

report::Constraints decision_constraints(const study::DecisionLimits& limits) {
  report::Constraints constraints;
  constraints.p99_ms = limits.p99_ms;
  constraints.min_qps = limits.min_qps;
  constraints.mem_mb = limits.mem_mb;
  constraints.max_accuracy_loss_pct = limits.max_accuracy_loss_pct;
  return constraints;
}

// Builds the zoo entries of the experiments whose models are missing (one driver run for all),
// so a plan made afterwards finds them; a failed build leaves those experiments to say so.
void build_missing_models(const study::EvaluationSuite& suite, bool quick, const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& experiment : suite.experiments) {
    if (quick && !experiment.in_quick) continue;
    try {
      if (missing_models(experiment.file, experiment, quick).empty()) continue;
    } catch (const Error&) {
      continue;  // the plan reports the unreadable file
    }
    for (const auto& name : experiment.zoo)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (names.empty()) return;
  std::vector<std::string> arguments{"build"};
  arguments.insert(arguments.end(), names.begin(), names.end());
  const auto log = folder / "zoo-build.log";
  fmt::print("building zoo models: {} (log: {})\n", fmt::join(names, " "), log.string());
  std::fflush(stdout);
  const auto outcome = process::run_child(zoo_driver_argv(arguments), log, {kZooBuildTimeoutS, 0});
  if (outcome.kind != process::ChildOutcome::Kind::kExited || outcome.exit_code != 0)
    fmt::print(stderr, "infermark: warning: zoo build {}: {}; see {}\n", fmt::join(names, " "), outcome.describe(), log.string());
}

void print_plan(const std::vector<PlannedExperiment>& plan) {
  std::size_t cells = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const auto& p = plan[i];
    if (p.not_run.empty())
      fmt::print("  {:>2}. {:<60} {:>3} {}\n", i + 1, p.experiment.title, p.cells, p.stages ? "modes" : "cells");
    else
      fmt::print("  {:>2}. {:<60} not run: {}\n", i + 1, p.experiment.title, p.not_run);
    if (p.not_run.empty()) cells += p.cells;
  }
  fmt::print("{} cells and modes in all\n", cells);
}

// "3.2 min elapsed, about 4 min left at the pace so far". A cell's planned length is no guide
// (a closed loop of N runs lasts N x a latency not yet measured), so the time left comes from the
// pace of the cells already run.
std::string progress_text(double elapsed_s, std::size_t cells_done, std::size_t cells_left) {
  if (cells_done == 0) return "the time left is estimated once the first cells have run";
  const double pace_left_s = elapsed_s / static_cast<double>(cells_done) * static_cast<double>(cells_left);
  return fmt::format("{:.1f} min elapsed, about {:.0f} min left at the pace so far", elapsed_s / 60, std::ceil(pace_left_s / 60));
}

// A file under the working folder as the user would type it from here (the default suite's path
// is absolute); any other as it is.
std::string as_typed_here(const fs::path& file) {
  const auto relative = file.lexically_relative(fs::current_path());
  return !relative.empty() && *relative.begin() != ".." ? relative.string() : file.string();
}

// The first summary.md the experiment wrote (the study's or the pipeline's folder inside its own).
std::string summary_of(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return "";
  for (fs::recursive_directory_iterator it(folder, ec), end; it != end; it.increment(ec))
    if (it->path().filename() == "summary.md") return read_text_file(it->path(), "experiment summary");
  return "";
}

std::vector<report::LoadedResult> results_of(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return {};
  try {
    return report::load_results({folder.string()});
  } catch (const Error&) {
    return {};  // nothing measured yet
  }
}

// Runs one planned experiment; returns the sweep's or pipeline's exit code (130: stopped).
int run_experiment(const PlannedExperiment& p, bool fresh, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  if (p.study) return scaleout::run_sweep_job(p.study->job, scaleout::World::get(), registry, stop);
  // A pipeline does not resume mode by mode: one that finished is kept unless --fresh.
  if (!fresh && !summary_of(p.folder).empty()) {
    fmt::print("kept from an earlier run: {}\n", p.folder.string());
    return 0;
  }
  return pipeline::run_pipeline_job(*p.stages, registry, stop);
}

int evaluate(const EvaluateOptions& o) {
  const auto suite = study::load_evaluation_suite(o.suite.empty() ? default_suite() : fs::path(o.suite));
  const auto folder = evaluation_folder(o.out, suite, o.quick);
  if (!o.dry_run) {
    fs::create_directories(folder);
    build_missing_models(suite, o.quick, folder);
  }
  const BackendRegistry registry(default_plugin_dir());
  std::vector<PlannedExperiment> plan;
  for (std::size_t i = 0; i < suite.experiments.size(); ++i)
    plan.push_back(plan_experiment(suite.experiments[i], i, folder, o.quick, o.fresh, o.memory_limit_mb, registry));
  fmt::print("evaluation {}{}: {} experiments into {}\n", suite.name, o.quick ? " (--quick)" : "", plan.size(), folder.string());
  print_plan(plan);
  if (o.dry_run) {
    fmt::print("(a dry run builds nothing: an experiment whose model is not found builds its zoo entries first when run)\n");
    return 0;
  }

  const auto& stop = install_stop_handler();
  const auto started = Clock::now();
  std::size_t cells_done = 0, cells_left = 0;
  for (const auto& p : plan)
    if (p.not_run.empty()) cells_left += p.cells;
  std::vector<report::ExperimentSection> sections;
  bool failed = false, stopped = false;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const auto& p = plan[i];
    report::ExperimentSection section;
    section.title = p.experiment.title;
    section.file = as_typed_here(p.experiment.file);
    if (!p.not_run.empty() || stopped) {
      section.outcome = report::ExperimentOutcome::kSkipped;
      section.reason = stopped ? "the evaluation was stopped before it" : p.not_run;
      failed = failed || (!p.quick_left_out && !stopped);
    } else {
      fmt::print("\n[{}/{}] {}: {} {}; {}\n", i + 1, plan.size(), p.experiment.title, p.cells, p.stages ? "modes" : "cells",
                 progress_text(std::chrono::duration<double>(Clock::now() - started).count(), cells_done, cells_left));
      std::fflush(stdout);
      int rc = 1;
      try {
        auto runnable = p;
        if (runnable.study) {
          section.unsupported = drop_unsupported(*runnable.study, folder / "check", o.fresh, registry, stop);
          for (const auto& line : section.unsupported) fmt::print("left out: {}\n", line);
        }
        if (runnable.study && runnable.study->job.cells.empty()) {
          section.outcome = report::ExperimentOutcome::kSkipped;
          section.reason = "no framework here can run its models";
          rc = stop ? 130 : 0;
          failed = true;
        } else {
          rc = run_experiment(runnable, o.fresh, registry, stop);
        }
      } catch (const Error& e) {
        section.reason = e.what();
        fmt::print(stderr, "infermark: {}: {}\n", p.experiment.title, e.what());
      }
      stopped = rc == 130;
      if (rc != 0) {
        section.outcome = report::ExperimentOutcome::kCellsFailed;
        if (section.reason.empty()) section.reason = stopped ? "stopped" : "see the failed cells' results";
        failed = true;
      }
    }
    if (p.not_run.empty()) {
      cells_done += p.cells;
      cells_left -= p.cells;
    }
    section.summary_markdown = summary_of(p.folder);
    section.results = results_of(p.folder);
    sections.push_back(std::move(section));
  }

  const auto constraints = decision_constraints(suite.decision);
  const report::EvaluationHeader header{suite.name, suite.description, o.quick, report::limits_text(constraints)};
  const auto decision = report::decide(sections, constraints);
  if (!harness::write_text_file(folder / "evaluation.md", report::evaluation_markdown(header, sections, decision)))
    failed = true;  // it said why
  try {
    if (!harness::write_text_file(folder / "report.html",
                                  report::render_evaluation_html(header, sections, decision, report::default_web_dir())))
      failed = true;
  } catch (const Error& e) {
    fmt::print(stderr, "infermark: warning: no report.html: {}\n", e.what());
    failed = true;
  }
  const auto decision_markdown =
      decision.recommendation ? report::to_markdown(*decision.recommendation) : "No decision: " + decision.error + ".\n";
  fmt::print("\n{}\nevaluation.md and report.html: {} ({:.1f} min)\n", decision_markdown, folder.string(),
             std::chrono::duration<double>(Clock::now() - started).count() / 60);
  if (stopped) {
    fmt::print(stderr, "infermark: interrupted; rerun the same command to resume\n");
    return 130;
  }
  return failed ? 1 : 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "evaluate", "The whole framework evaluation in one command: every experiment of a suite, one report, a decision");
  static EvaluateOptions o;
  cmd->add_option("suite", o.suite, "Evaluation suite YAML (default: studies/evaluation/suite.yaml of the repository)");
  cmd->add_flag("--quick", o.quick, "Each experiment's reduced form (fewer runs, axis values and models; minutes on 2 cores)");
  cmd->add_option("--out", o.out, "Folder for the evaluation (an evaluation-<name> folder inside)")->capture_default_str();
  cmd->add_flag("--fresh", o.fresh, "Measure everything again instead of resuming");
  cmd->add_flag("--dry-run", o.dry_run, "Print the experiments and their cells; build and run nothing");
  add_memory_limit_flag(*cmd, o.memory_limit_mb);
  cmd->callback([&exit_code] { exit_code = evaluate(o); });
}

}  // namespace infermark::cli

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
#include "cli/evaluation_ranks.hpp"
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
  bool per_host = false;  // under mpirun: every host runs the whole evaluation
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

// The summary.md the experiment wrote (the study's or the pipeline's folder inside its own); with
// --per-host a pipeline wrote one per host, each given under its host's heading.
std::string summary_of(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return "";
  std::vector<fs::path> found;
  for (fs::recursive_directory_iterator it(folder, ec), end; it != end; it.increment(ec))
    if (it->path().filename() == "summary.md") found.push_back(it->path());
  if (found.size() == 1) return read_text_file(found.front(), "experiment summary");
  std::sort(found.begin(), found.end());
  std::string text;
  for (const auto& path : found)
    text += "# Host " + path.lexically_relative(folder).begin()->string() + "\n\n" +
            report::demoted_headings(read_text_file(path, "experiment summary")) + "\n";
  return text;
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

// Runs one planned experiment on this rank; returns the sweep's or pipeline's exit code (130:
// stopped). A sweep is collective under --per-host; a pipeline runs on each rank alone.
int run_experiment(const PlannedExperiment& p, bool fresh, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  if (p.study) return scaleout::run_sweep_job(p.study->job, scaleout::World::get(), registry, stop);
  // A pipeline does not resume mode by mode: one that finished is kept unless --fresh.
  if (!fresh && !summary_of(p.stages->out).empty()) {
    fmt::print("kept from an earlier run: {}\n", p.stages->out.string());
    return 0;
  }
  return pipeline::run_pipeline_job(*p.stages, registry, stop);
}

// One experiment on this rank, from `check` to its sweep or pipeline; every rank takes the same
// collective steps whatever happens to it, so an error on one host never leaves the others waiting.
RankExperiment run_on_this_rank(const PlannedExperiment& planned, const fs::path& own_folder, const EvaluateOptions& o,
                                EvaluationRanks& ranks, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  RankExperiment mine;
  auto p = planned;
  if (p.stages) p.stages->out = ranks.pipeline_folder(p.folder);
  if (p.study) {
    p.study->job.per_host = ranks.per_host();
    try {
      mine.unsupported = drop_unsupported(*p.study, own_folder / "check", o.fresh, registry, stop);
    } catch (const Error& e) {
      mine.error = e.what();
      leave_out_every_cell(*p.study);
    }
    if (!ranks.any(!p.study->job.cells.empty())) {
      mine.ran = false;
      mine.exit_code = stop ? 130 : 0;
      return mine;
    }
  }
  try {
    mine.exit_code = run_experiment(p, o.fresh, registry, stop);
  } catch (const Error& e) {
    mine.error = e.what();
    mine.exit_code = 1;
  }
  if (p.stages) ranks.gather_pipeline_results(p.folder);
  return mine;
}

// The section of one experiment as rank 0 reports it, from every rank's outcome.
void record_outcome(report::ExperimentSection& section, const ExperimentAcrossRanks& across) {
  section.unsupported = across.unsupported;
  for (const auto& line : section.unsupported) fmt::print("left out: {}\n", line);
  if (!across.ran) {
    section.outcome = report::ExperimentOutcome::kSkipped;
    section.reason = "no framework here can run its models" + (across.error.empty() ? "" : " (" + across.error + ")");
  } else if (!across.error.empty()) {
    section.outcome = report::ExperimentOutcome::kFailedToRun;
    section.reason = across.error;
    fmt::print(stderr, "infermark: {}: {}\n", section.title, across.error);
  } else if (across.failed) {
    section.outcome = report::ExperimentOutcome::kCellsFailed;
    section.reason = across.stopped ? "stopped" : "see the failed cells' results";
  }
}

// evaluation.md and report.html from every experiment's section, ending in the decision; returns
// `exit_code`, or 1 when a report could not be written.
int write_report(const study::EvaluationSuite& suite, bool quick, const fs::path& folder,
                 const std::vector<report::ExperimentSection>& sections, Clock::time_point started, int exit_code) {
  const auto constraints = decision_constraints(suite.decision);
  const report::EvaluationHeader header{suite.name, suite.description, quick, report::limits_text(constraints)};
  const auto decision = report::decide(sections, constraints);
  bool written = harness::write_text_file(folder / "evaluation.md", report::evaluation_markdown(header, sections, decision));
  try {
    written = harness::write_text_file(folder / "report.html",
                                       report::render_evaluation_html(header, sections, decision, report::default_web_dir())) &&
              written;
  } catch (const Error& e) {
    fmt::print(stderr, "infermark: warning: no report.html: {}\n", e.what());
    written = false;
  }
  const auto decision_markdown =
      decision.recommendation ? report::to_markdown(*decision.recommendation) : "No decision: " + decision.error + ".\n";
  fmt::print("\n{}\nevaluation.md and report.html: {} ({:.1f} min)\n", decision_markdown, folder.string(),
             std::chrono::duration<double>(Clock::now() - started).count() / 60);
  return exit_code == 0 && !written ? 1 : exit_code;
}

int evaluate(const EvaluateOptions& o) {
  auto& world = scaleout::World::get();  // refuses several ranks when built without MPI
  EvaluationRanks ranks(world, o.per_host);
  if (!ranks.refusal().empty()) {
    if (world.is_root()) throw Error(ranks.refusal());
    return 2;  // rank 0 says why
  }
  const bool root = ranks.is_root();
  const auto suite = study::load_evaluation_suite(o.suite.empty() ? default_suite() : fs::path(o.suite));
  const auto folder = evaluation_folder(o.out, suite, o.quick);
  const auto own_folder = ranks.own_folder(folder);
  if (!o.dry_run) {
    fs::create_directories(own_folder);
    ranks.root_first([&] { build_missing_models(suite, o.quick, own_folder); });
  }
  const BackendRegistry registry(default_plugin_dir());
  std::vector<PlannedExperiment> plan;
  for (std::size_t i = 0; i < suite.experiments.size(); ++i)
    plan.push_back(plan_experiment(suite.experiments[i], i, folder, o.quick, o.fresh, o.memory_limit_mb, registry));
  if (root) {
    fmt::print("evaluation {}{}: {} experiments into {}{}\n", suite.name, o.quick ? " (--quick)" : "", plan.size(),
               folder.string(), ranks.per_host() ? fmt::format(", on {} hosts (--per-host)", ranks.world().size()) : "");
    print_plan(plan);
  }
  if (o.dry_run) {
    if (root)
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
    const auto not_run = ranks.why_not_everywhere(p.not_run);
    if (!not_run.empty() || stopped) {
      section.outcome = report::ExperimentOutcome::kSkipped;
      section.reason = stopped ? "the evaluation was stopped before it" : not_run;
      failed = failed || (!p.quick_left_out && !stopped);
    } else {
      if (root)
        fmt::print("\n[{}/{}] {}: {} {}; {}\n", i + 1, plan.size(), p.experiment.title, p.cells, p.stages ? "modes" : "cells",
                   progress_text(std::chrono::duration<double>(Clock::now() - started).count(), cells_done, cells_left));
      std::fflush(stdout);
      const auto across = ranks.gather_outcomes(run_on_this_rank(p, own_folder, o, ranks, registry, stop));
      stopped = across.stopped;
      record_outcome(section, across);
      failed = failed || across.failed || section.outcome != report::ExperimentOutcome::kMeasured;
    }
    if (p.not_run.empty()) {
      cells_done += p.cells;
      cells_left -= p.cells;
    }
    if (!root) continue;  // rank 0 alone reads the results and writes the report
    section.summary_markdown = summary_of(p.folder);
    section.results = results_of(p.folder);
    sections.push_back(std::move(section));
  }
  if (stopped && root) fmt::print(stderr, "infermark: interrupted; rerun the same command to resume\n");
  const int exit_code = stopped ? 130 : failed ? 1 : 0;
  return ranks.agree_on_exit_code(root ? write_report(suite, o.quick, folder, sections, started, exit_code) : 0);
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
  cmd->add_flag("--per-host", o.per_host,
                "Under mpirun (one rank per host): every host runs the whole evaluation; one report puts the "
                "machines side by side (framework x machine) and decides per machine");
  add_memory_limit_flag(*cmd, o.memory_limit_mb);
  cmd->callback([&exit_code] { exit_code = evaluate(o); });
}

}  // namespace infermark::cli

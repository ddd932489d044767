#include "pipeline/pipeline_job.hpp"

#include <fmt/core.h>

#include <fstream>

#include "pipeline/pipeline_report.hpp"
#include "probes/environment.hpp"

namespace infermark::pipeline {

int run_pipeline_job(const PipelineJob& job, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  auto spec = load_pipeline_file(job.file);
  apply_overrides(job.overrides, spec, job.file);
  const auto folder = pipeline_folder(job.out, spec);
  std::filesystem::create_directories(folder);
  RunSettings settings;
  settings.executable = std::filesystem::read_symlink("/proc/self/exe");  // the stage workers are infermark
  settings.work_dir = folder / "work";
  settings.stop = &stop;
  const auto captured = probes::capture_environment();
  settings.logical_cores = captured.logical_cores;
  const auto environment = probes::to_json(captured);

  std::vector<ModeOutcome> outcomes;
  for (const auto& mode : spec.modes) {
    if (stop.load()) break;
    fmt::print("pipeline {}: {} ...\n", spec.name, result::name_of(mode));
    std::fflush(stdout);
    outcomes.push_back(run_mode(registry, spec, mode, job.load, settings));
    if (outcomes.back().status != result::CellStatus::kOk)
      fmt::print(stderr, "infermark: {} mode {}: {}\n", result::name_of(mode), result::name_of(outcomes.back().status),
                 outcomes.back().error);
  }
  std::vector<ModeFigures> figures;
  for (const auto& outcome : outcomes) figures.push_back(figures_of(outcome, spec.stages.size()));
  compare_modes(figures, outcomes);

  bool failed = false;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    write_mode_result(folder, spec, job.file, outcomes[i], figures[i], environment);
    failed = failed || outcomes[i].status != result::CellStatus::kOk;
  }
  const auto summary = pipeline_summary(spec, outcomes, figures, job.load);
  std::ofstream(folder / "summary.md") << summary;
  fmt::print("\n{}\nresults and summary.md: {}\n", summary, folder.string());
  if (stop.load()) return 130;
  return failed ? 1 : 0;
}

}  // namespace infermark::pipeline

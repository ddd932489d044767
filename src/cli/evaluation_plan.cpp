#include "cli/evaluation_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/model_check.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "pipeline/pipeline_file.hpp"
#include "result/pipeline_mode.hpp"
#include "study/study.hpp"

namespace infermark::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> models_of(const fs::path& file, const study::Experiment& experiment, bool quick) {
  if (pipeline::is_pipeline_file(file)) {
    std::vector<std::string> models;
    for (const auto& stage : pipeline::load_pipeline_file(file).stages) models.push_back(stage.model.string());
    return models;
  }
  auto study = study::load_study(file);
  if (quick) study = study::with_quick_overrides(std::move(study), experiment);
  return study.models;
}

// Keeps the sweep's cells (and their names, requests and estimates) where keep[i] is true.
void keep_cells(scaleout::SweepJob& job, const std::vector<bool>& keep) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    if (!keep[i]) continue;
    if (kept == i) {  // a self-move would leave the cell empty
      ++kept;
      continue;
    }
    job.cells[kept] = std::move(job.cells[i]);
    job.plan.cells[kept] = std::move(job.plan.cells[i]);
    job.plan.cell_names[kept] = std::move(job.plan.cell_names[i]);
    job.estimates_s[kept] = job.estimates_s[i];
    ++kept;
  }
  job.cells.resize(kept);
  job.plan.cells.resize(kept);
  job.plan.cell_names.resize(kept);
  job.estimates_s.resize(kept);
}

}  // namespace

std::vector<std::string> drop_unsupported(StudyJob& study, const fs::path& check_folder, bool fresh,
                                          const BackendRegistry& registry, const std::atomic<bool>& stop) {
  auto& job = study.job;
  std::vector<SupportQuestion> questions;
  for (const auto& cell : job.cells) {
    if (cell.server) continue;  // a remote server is measured as it is
    const bool asked = std::any_of(questions.begin(), questions.end(), [&](const SupportQuestion& q) {
      return q.options.model == cell.model && q.backend == cell.backend;
    });
    if (!asked) questions.push_back({cell_options(job.study, cell), cell.backend});
  }
  if (questions.empty()) return {};
  fs::create_directories(check_folder);
  const auto answers = check_support(questions, registry, check_folder, !fresh, stop);
  std::vector<std::string> dropped;
  std::vector<bool> keep(job.cells.size(), true);
  for (const auto& a : answers) {
    if (a.runs() || a.status == result::CellStatus::kInterrupted) continue;
    dropped.push_back(fmt::format("{} cannot run {}: {}", a.backend, a.model, a.reason.empty() ? "no reason given" : a.reason));
    for (std::size_t i = 0; i < job.cells.size(); ++i)
      if (job.cells[i].model == a.model && job.cells[i].backend == a.backend) keep[i] = false;
  }
  keep_cells(job, keep);
  return dropped;
}

void leave_out_every_cell(StudyJob& study) { keep_cells(study.job, std::vector<bool>(study.job.cells.size(), false)); }

fs::path evaluation_folder(const fs::path& out, const study::EvaluationSuite& suite, bool quick) {
  return out / ("evaluation-" + suite.name + (quick ? "-quick" : ""));
}

std::vector<std::string> missing_models(const fs::path& file, const study::Experiment& experiment, bool quick) {
  std::vector<std::string> missing;
  for (const auto& model : models_of(file, experiment, quick))
    if (!fs::exists(model)) missing.push_back(model);
  return missing;
}

PlannedExperiment plan_experiment(const study::Experiment& experiment, std::size_t index, const fs::path& evaluation, bool quick,
                                  bool fresh, double memory_limit_mb, const BackendRegistry& registry) {
  PlannedExperiment planned;
  planned.experiment = experiment;
  planned.folder = evaluation / fmt::format("{:02}-{}", index + 1, experiment.file.stem().string());
  if (quick && !experiment.in_quick) {
    planned.quick_left_out = true;
    planned.not_run = "left out of --quick";
    return planned;
  }
  try {
    const auto check_models = [&](const std::vector<std::string>& models) {
      for (const auto& model : models)
        if (!fs::exists(model))
          throw Error(fmt::format("model {} not found{}", model,
                                  experiment.zoo.empty() ? "" : fmt::format(" (zoo: {})", fmt::join(experiment.zoo, ", "))));
    };
    if (pipeline::is_pipeline_file(experiment.file)) {
      pipeline::PipelineJob job;
      job.file = experiment.file.string();
      if (quick && experiment.quick.requests) job.overrides.requests = *experiment.quick.requests;
      job.out = planned.folder;
      auto spec = pipeline::load_pipeline_file(experiment.file);
      std::vector<std::string> models;
      for (const auto& stage : spec.stages) models.push_back(stage.model.string());
      check_models(models);
      pipeline::apply_overrides(job.overrides, spec, job.file);
      planned.cells = spec.modes.size();
      planned.stages = std::move(job);
    } else {
      auto study = study::load_study(experiment.file);
      if (quick) study = study::with_quick_overrides(std::move(study), experiment);
      check_models(study.models);
      planned.study = make_study_job(study, registry, planned.folder.string(), fresh, memory_limit_mb);
      planned.cells = planned.study->job.cells.size();
    }
  } catch (const Error& e) {
    planned.not_run = e.what();
  }
  return planned;
}

}  // namespace infermark::cli

#include "cli/evaluation_plan.hpp"

#include <fmt/core.h>

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

}  // namespace

fs::path evaluation_folder(const fs::path& out, const study::EvaluationSuite& suite, bool quick) {
  return out / ("evaluation-" + suite.name + (quick ? "-quick" : ""));
}

std::vector<std::string> missing_models(const fs::path& file, const study::Experiment& experiment, bool quick) {
  std::vector<std::string> missing;
  for (const auto& model : models_of(file, experiment, quick))
    if (!fs::exists(model)) missing.push_back(model);
  return missing;
}

PlannedExperiment plan_experiment(const study::Experiment& experiment, std::size_t index, const fs::path& evaluation,
                                  bool quick, bool fresh, double memory_limit_mb, const BackendRegistry& registry) {
  PlannedExperiment planned;
  planned.experiment = experiment;
  planned.folder = evaluation / fmt::format("{:02}-{}", index + 1, experiment.file.stem().string());
  if (quick && !experiment.in_quick) {
    planned.quick_left_out = true;
    planned.not_run = "left out of --quick";
    return planned;
  }
  try {
    if (const auto missing = missing_models(experiment.file, experiment, quick); !missing.empty())
      throw Error("model " + missing.front() + " not found" +
                  (experiment.zoo.empty() ? "" : " (the zoo build of its entries did not write it)"));
    if (pipeline::is_pipeline_file(experiment.file)) {
      pipeline::PipelineJob job;
      job.file = experiment.file.string();
      if (quick && experiment.quick.requests) job.overrides.requests = *experiment.quick.requests;
      job.out = planned.folder;
      auto spec = pipeline::load_pipeline_file(experiment.file);
      pipeline::apply_overrides(job.overrides, spec, job.file);
      planned.cells = spec.modes.size();
      planned.stages = std::move(job);
    } else {
      auto study = study::load_study(experiment.file);
      if (quick) study = study::with_quick_overrides(std::move(study), experiment);
      planned.study = make_study_job(study, registry, planned.folder.string(), fresh, memory_limit_mb);
      planned.cells = planned.study->job.cells.size();
    }
  } catch (const Error& e) {
    planned.not_run = e.what();
  }
  return planned;
}

}  // namespace infermark::cli

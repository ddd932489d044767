// `infermark evaluate`'s plan: each experiment of the suite as the sweep or pipeline job that runs
// it, in its own folder of the evaluation; or the reason it cannot run, so
// one experiment that cannot start does not stop the others.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "cli/study_job.hpp"
#include "pipeline/pipeline_job.hpp"
#include "study/evaluation_suite.hpp"

namespace infermark::cli {

struct PlannedExperiment {
  study::Experiment experiment;
  std::filesystem::path folder;                 // <evaluation>/<NN>-<file stem>: everything it writes
  std::optional<StudyJob> study;                // a study's sweep
  std::optional<pipeline::PipelineJob> stages;  // or a pipeline's modes
  std::size_t cells = 0;                        // study cells, or pipeline modes
  std::string not_run;                          // why it will not run ("" when it will); quick_left_out tells the kind
  bool quick_left_out = false;
};

// Where an evaluation keeps everything: <out>/evaluation-<name>, or -quick, so the two never mix.
std::filesystem::path evaluation_folder(const std::filesystem::path& out, const study::EvaluationSuite& suite, bool quick);

// Models of the experiment's file (a study's models, a pipeline's stage models) that are not on disk.
std::vector<std::string> missing_models(const std::filesystem::path& file, const study::Experiment& experiment, bool quick);

// `infermark check` on each (model, backend) of a study experiment with the settings its cells
// use, answers kept in `check_folder` (resumable); the pairs that cannot run are dropped from the
// sweep. Returns "opencv cannot load models/x.onnx: <the framework's reason>" per dropped pair.
std::vector<std::string> drop_unsupported(StudyJob& study, const std::filesystem::path& check_folder, bool fresh,
                                          const BackendRegistry& registry, const std::atomic<bool>& stop);

// Leaves every cell of the sweep out (a rank that cannot check them still takes part in it).
void leave_out_every_cell(StudyJob& study);

// Plans one experiment; never throws for the experiment's own faults (they become not_run).
PlannedExperiment plan_experiment(const study::Experiment& experiment, std::size_t index, const std::filesystem::path& evaluation,
                                  bool quick, bool fresh, double memory_limit_mb, const BackendRegistry& registry);

}  // namespace infermark::cli

// A study turned into the sweep that runs it: every cell validated as `run` flags (so a wrong flag
// is reported before anything runs), its worker plan and its time bound. Shared by `sweep` and
// `evaluate`.
#pragma once

#include <string>

#include "backends/registry.hpp"
#include "scaleout/sweep_job.hpp"
#include "study/study.hpp"

namespace infermark::cli {

struct StudyJob {
  scaleout::SweepJob job;  // search and per-host off; the caller sets them
  double estimate_s = 0;   // upper bound of the whole matrix (study::cell_estimate_s per cell)
};

// Throws infermark::Error naming the study file when it has no cells or a cell's backend is not built.
StudyJob make_study_job(const study::Study& study, const BackendRegistry& registry, const std::string& out, bool fresh,
                        double memory_limit_mb);

}  // namespace infermark::cli

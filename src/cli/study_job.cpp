#include "cli/study_job.hpp"

#include <algorithm>

#include "cli/run_flags.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "remote/load_request.hpp"

namespace infermark::cli {

StudyJob make_study_job(const study::Study& study, const BackendRegistry& registry, const std::string& out, bool fresh,
                        double memory_limit_mb) {
  const auto file = study.file.string();
  StudyJob made;
  auto& job = made.job;
  job.study = study;
  job.cells = study::expand(study, registry.available());
  if (job.cells.empty()) throw Error(file + ": the study has no cells (no built backend reads its models?)");
  for (const auto& backend : study.backends)
    if (std::none_of(job.cells.begin(), job.cells.end(), [&](const study::StudyCell& c) { return c.backend == backend; }))
      throw Error(file + ": backend '" + backend + "' reads none of the study's models");
  auto& plan = job.plan;
  for (const auto& cell : job.cells) {
    const auto options = cell_options(study, cell);  // validates every cell before anything runs
    if (!cell.server && !registry.is_available(cell.backend))
      throw Error(file + ": backend '" + cell.backend + "' is not built into this infermark");
    plan.cells.push_back(harness::to_cell(options, cell.backend, harness::thread_counts(options).front()));
    if (const auto& server = cell.server)
      plan.cells.back().remote =
          remote::server_cell_remote(server->url, server->protocol, server->model, server->origin, plan.cells.back());
    plan.cell_names.push_back(cell.name);
    job.estimates_s.push_back(study::cell_estimate_s(options.scenario));
    made.estimate_s += job.estimates_s.back();
  }
  plan.output_dir = study::study_folder(out, study);
  plan.resume = !fresh;
  plan.cell_timeout_s = 0;
  for (const auto& cell : plan.cells)
    plan.cell_timeout_s = std::max(plan.cell_timeout_s, harness::default_cell_timeout_s(cell.scenario));
  plan.worker_memory_limit_mb = memory_limit_mb;
  plan.worker_argv = worker_argv;
  return made;
}

}  // namespace infermark::cli

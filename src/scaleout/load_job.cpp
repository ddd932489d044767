#include "scaleout/load_job.hpp"

#include <fmt/core.h>

#include <cctype>
#include <ctime>

#include "core/error.hpp"
#include "remote/load_request.hpp"
#include "result/results_folder.hpp"
#include "scaleout/mpi_world.hpp"
#include "scaleout/rank_coordination.hpp"

namespace infermark::scaleout {
namespace {

std::string cell_file_name(const result::RunResult& result, int concurrency) {
  std::string name = "remote-" + (result.model.name.empty() ? std::string("model") : result.model.name);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name + (concurrency > 0 ? "-c" + std::to_string(concurrency) : "") + ".json";
}

void print_cell(const result::RunResult& r, const std::string& destination) {
  auto line = fmt::format("{} {} {}", r.backend.framework, r.model.name, result::name_of(r.status));
  if (r.latency_ms)
    line += fmt::format("  P50 {:.3f} ms  P99 {:.3f} ms  {:.1f} req/s", r.latency_ms->at(50).value, r.latency_ms->at(99).value,
                        r.throughput.queries_per_s);
  if (r.generation && r.generation->ttft_ms)
    line += fmt::format("  TTFT P50 {:.1f} ms  {:.1f} output tokens/s", r.generation->ttft_ms->at(50).value,
                        r.generation->output_tokens_per_s);
  if (r.remote && r.remote->errors) line += fmt::format("  errors {}", r.remote->errors->total);
  fmt::print("{}  -> {}\n", line, destination);
  if (!r.error.empty()) fmt::print(stderr, "infermark load: {}\n", r.error);
  std::fflush(stdout);
}

// Rank 0 alone writes: it creates the results folder, and every rank learns whether it could.
std::filesystem::path results_folder(const LoadJob& o, World& world) {
  std::filesystem::path folder;
  std::string error;
  if (world.is_root()) try {
      folder = result::create_results_folder(o.out, o.request.model.empty() ? std::string("remote") : o.request.model,
                                             std::time(nullptr));
    } catch (const Error& e) {
      error = e.what();
    }
  if (!world.all(error.empty())) throw Error(error.empty() ? "--out: rank 0 could not create the results folder" : error);
  return folder;
}

}  // namespace

int run_load_job(const LoadJob& o, const std::atomic<bool>& stop) {
  auto& world = World::get();
  auto ranks = coordination_of(world);
  const bool as_ranks = records_ranks(world);
  const bool root = world.is_root();
  remote::check_remote_request(o.request, remote::kLoadFlagNames);  // a bad URL fails before anything else
  auto measurement = o.measurement;
  measurement.model = o.request.url;
  const auto folder = results_folder(o, world);
  bool failed = false;
  for (const int level : harness::concurrency_levels(measurement)) {
    // Every rank measures each level, or none does (a rank alone would wait in a collective).
    if (!world.all(!stop.load())) break;
    auto request = o.request;
    request.cell = remote::load_cell(measurement, level);
    auto& scenario = request.cell.scenario;
    // What cannot be split over the ranks fails here, the same on every rank, before any collective.
    if (world.distributed()) loadgen::share_for_rank(scenario, world.rank(), world.size());
    if (root) {
      fmt::print("load {} ({}) {}{} ...\n", request.url, remote::name_of(request.protocol), loadgen::name_of(scenario.name),
                 as_ranks ? fmt::format(" on {} ranks", world.size()) : std::string());
      std::fflush(stdout);
    }
    const auto result = remote::measure_remote(request, &stop, {}, as_ranks ? &ranks : nullptr);
    if (!root) {  // rank 0 prints and writes the merged result; the others speak only of their own failure
      if (result.status != result::CellStatus::kOk)
        fmt::print(stderr, "infermark load: rank {}: {}\n", world.rank(), result.error);
      failed = failed || result.status != result::CellStatus::kOk;
      continue;
    }
    const auto path = folder / cell_file_name(result, level);
    // A full disk loses the file, not the figures: they are printed, and the next level still runs.
    std::string save_error;
    try {
      result::write_run_result(result, path.string());
    } catch (const Error& e) {
      save_error = e.what();
    }
    print_cell(result, save_error.empty() ? path.string() : "NOT SAVED");
    if (!save_error.empty()) fmt::print(stderr, "infermark load: {}\n", save_error);
    failed = failed || result.status != result::CellStatus::kOk || !save_error.empty();
  }
  if (stop.load()) return 130;
  return failed ? 1 : 0;
}

}  // namespace infermark::scaleout

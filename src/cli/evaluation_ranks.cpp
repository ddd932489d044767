#include "cli/evaluation_ranks.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "harness/unsaved_results.hpp"
#include "study/cell_assignment.hpp"

namespace infermark::cli {

namespace fs = std::filesystem;
using nlohmann::json;

EvaluationRanks::EvaluationRanks(scaleout::World& world, bool per_host) : world_(world), per_host_(per_host) {
  if (world.distributed() && !per_host) {
    refusal_ = fmt::format(
        "`evaluate` under mpirun ({} ranks) needs --per-host: each host runs the whole evaluation and the report "
        "puts the machines side by side (sharing one evaluation's cells among hosts would mix machines in one table)",
        world.size());
    return;
  }
  try {
    roster_ = scaleout::gather_roster(world);
  } catch (const Error& e) {
    refusal_ = e.what();  // different builds, on every rank
    return;
  }
  std::vector<std::string> hosts;
  for (const auto& rank : roster_) hosts.push_back(rank.host);
  refusal_ = study::shared_host_error(hosts, false);
}

fs::path EvaluationRanks::own_folder(const fs::path& evaluation) const {
  return per_host_ ? study::per_host_folder(evaluation / "hosts", world_.host()) : evaluation;
}

fs::path EvaluationRanks::pipeline_folder(const fs::path& experiment_folder) const {
  return per_host_ ? study::per_host_folder(experiment_folder, world_.host()) : experiment_folder;
}

std::string EvaluationRanks::named(std::size_t rank, const std::string& text) const {
  return world_.distributed() ? fmt::format("on {}: {}", roster_.at(rank).host, text) : text;
}

std::string EvaluationRanks::why_not_everywhere(const std::string& mine) {
  std::string why;
  const auto reasons = world_.gather(mine);
  for (std::size_t r = 0; r < reasons.size(); ++r)
    if (!reasons[r].empty()) {
      // Rank 0's reason reads as it does on one machine; another rank's names its host.
      why = r == 0 ? reasons[r] : named(r, reasons[r]);
      break;
    }
  return world_.broadcast(why);
}

bool EvaluationRanks::any(bool mine) { return !world_.all(!mine); }

ExperimentAcrossRanks EvaluationRanks::gather_outcomes(const RankExperiment& mine) {
  const auto texts =
      world_.gather(json{{"exit_code", mine.exit_code}, {"error", mine.error}, {"unsupported", mine.unsupported}}.dump());
  ExperimentAcrossRanks merged;
  merged.ran = mine.ran;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    const auto outcome = json::parse(texts[r]);
    const auto exit_code = outcome.at("exit_code").get<int>();
    const auto error = outcome.at("error").get<std::string>();
    merged.failed = merged.failed || exit_code != 0 || !error.empty();
    if (!error.empty()) merged.error += (merged.error.empty() ? "" : "; ") + named(r, error);
    for (const auto& line : outcome.at("unsupported")) merged.unsupported.push_back(named(r, line.get<std::string>()));
  }
  merged.stopped = !world_.all(mine.exit_code != 130);
  return merged;
}

void EvaluationRanks::gather_pipeline_results(const fs::path& experiment_folder) {
  if (!per_host_ || !world_.distributed()) return;  // rank 0's own results are in place
  json files = json::object();
  const auto mine = pipeline_folder(experiment_folder);
  std::error_code ec;
  if (!world_.is_root() && fs::is_directory(mine, ec))
    for (fs::recursive_directory_iterator it(mine, ec), end; it != end; it.increment(ec)) {
      const auto extension = it->path().extension();
      if (!it->is_regular_file(ec) || (extension != ".json" && extension != ".md")) continue;
      try {
        files[it->path().lexically_relative(experiment_folder).generic_string()] = read_text_file(it->path(), "pipeline result");
      } catch (const Error& e) {
        fmt::print(stderr, "infermark: {}\n", e.what());  // the others still travel
      }
    }
  const auto received = world_.gather(files.dump());
  for (std::size_t r = 1; r < received.size(); ++r) {
    const auto sent = json::parse(received[r]);
    for (const auto& [relative, text] : sent.items()) {
      const auto path = experiment_folder / fs::path(relative).lexically_normal();
      // Only under the sending rank's own host folder: a path from another rank never escapes it.
      const auto host_folder = study::per_host_folder(experiment_folder, roster_.at(r).host);
      if (path.lexically_relative(host_folder).empty() || *path.lexically_relative(host_folder).begin() == "..") continue;
      fs::create_directories(path.parent_path(), ec);
      harness::write_text_file(path, text.get<std::string>());  // says why when it cannot
    }
  }
}

int EvaluationRanks::agree_on_exit_code(int root_exit_code) {
  return std::stoi(world_.broadcast(std::to_string(root_exit_code)));
}

}  // namespace infermark::cli

#include "study/cell_assignment.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

namespace infermark::study {

std::vector<std::vector<std::size_t>> assign_cells(const std::vector<double>& estimates_s, int ranks) {
  std::vector<std::vector<std::size_t>> shares(static_cast<std::size_t>(std::max(ranks, 1)));
  std::vector<std::size_t> order(estimates_s.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return estimates_s[a] > estimates_s[b]; });
  for (std::size_t k = 0; k < order.size(); ++k) shares[k % shares.size()].push_back(order[k]);
  return shares;
}

std::filesystem::path per_host_folder(const std::filesystem::path& study_folder, const std::string& host) {
  auto name = host.empty() ? std::string("unknown-host") : host;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (name == "." || name == "..") name = "_";
  return study_folder / name;
}

std::string shared_host_error(const std::vector<std::string>& rank_hosts, bool cells_can_be_shared) {
  std::map<std::string, std::vector<std::size_t>> ranks_of;
  for (std::size_t r = 0; r < rank_hosts.size(); ++r) ranks_of[per_host_folder("", rank_hosts[r]).string()].push_back(r);
  std::string shared;
  for (const auto& [host, ranks] : ranks_of) {
    if (ranks.size() < 2) continue;
    std::string list;
    for (const auto r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    shared += (shared.empty() ? "" : "; ") + ("ranks " + list + " all run on host " + rank_hosts[ranks.front()]);
  }
  if (shared.empty()) return "";
  return "--per-host: " + shared + "; start one rank per host (mpirun --map-by ppr:1:node, srun --ntasks-per-node=1)" +
         (cells_can_be_shared ? ", or drop --per-host to share the study's cells among the ranks" : "");
}

}  // namespace infermark::study

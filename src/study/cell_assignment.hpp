// How a distributed sweep shares a study's cells among MPI ranks, and where --per-host keeps each
// host's results. Pure functions of the study and the ranks, so every rank computes the same plan
// and a rerun of the same command finds the same files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace infermark::study {

// Each rank's cells (indices into the study's cells), in the order it runs them. Cells are taken
// longest estimate first (ties in study order) and dealt round-robin: rank 0 gets the 1st, N+1st,
// ...; rank 1 the 2nd, N+2nd, ... The ranks run in rounds (one cell each, then the results go to
// rank 0), and dealing in that order gives each round cells of similar length.
std::vector<std::vector<std::size_t>> assign_cells(const std::vector<double>& estimates_s, int ranks);

// Where --per-host keeps one host's results: <study folder>/<host>, the host name with any
// character other than letters, digits, '.', '-' and '_' replaced by '_'.
std::filesystem::path per_host_folder(const std::filesystem::path& study_folder, const std::string& host);

// "" when every rank has its own host name, else the refusal of --per-host naming the ranks that
// share one (their results would land in one folder, and their measurements disturb each other);
// `cells_can_be_shared`: the refusal offers sharing the cells among the ranks instead.
std::string shared_host_error(const std::vector<std::string>& rank_hosts, bool cells_can_be_shared = true);

}  // namespace infermark::study

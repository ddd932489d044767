// Who takes part in a distributed job: every rank's host and infermark version, known on every
// rank, and the refusal of a job whose ranks run different infermark builds (their numbers would
// not be comparable, and their result files may not even agree on the schema). Used by sweep and load.
#pragma once

#include <string>
#include <vector>

#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {

struct RankInfo {
  int rank = 0;
  std::string host;
  std::string version;
};

// This build: "infermark 0.1.0 (Release, GCC 12.2.0, MPI)". Two ranks must print the same.
std::string infermark_version();

// "" when every rank runs rank 0's version, else the refusal naming each rank that differs (rank,
// host, version) and rank 0's version.
std::string version_mismatch(const std::vector<RankInfo>& ranks);

// Every rank's host and version, in rank order, on every rank (gathered on rank 0 and broadcast).
// Throws infermark::Error, on every rank alike, when the versions differ.
std::vector<RankInfo> gather_roster(World& world, const std::string& version = infermark_version());

}  // namespace infermark::scaleout

#include "scaleout/rank_roster.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

#ifndef INFERMARK_PROJECT_VERSION
#define INFERMARK_PROJECT_VERSION "unknown"
#endif
#ifndef INFERMARK_BUILD_TYPE
#define INFERMARK_BUILD_TYPE "unknown"
#endif

namespace infermark::scaleout {

std::string infermark_version() {
#if defined(__clang__)
  const std::string compiler = "Clang " __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler =
      "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." + std::to_string(__GNUC_PATCHLEVEL__);
#else
  const std::string compiler = "unknown compiler";
#endif
  return std::string("infermark ") + INFERMARK_PROJECT_VERSION + " (" + INFERMARK_BUILD_TYPE + ", " + compiler +
         (built_with_mpi() ? ", MPI" : ", no MPI") + ")";
}

std::string version_mismatch(const std::vector<RankInfo>& ranks) {
  if (ranks.empty()) return "";
  std::string differing;
  for (const auto& r : ranks)
    if (r.version != ranks.front().version)
      differing += (differing.empty() ? "" : "; ") + ("rank " + std::to_string(r.rank) + " on " + r.host + " runs " + r.version);
  if (differing.empty()) return "";
  return "the ranks run different infermark builds: rank 0 on " + ranks.front().host + " runs " + ranks.front().version + ", " +
         differing + "; install the same build on every host";
}

std::vector<RankInfo> gather_roster(World& world, const std::string& version) {
  const auto texts = world.gather(nlohmann::json{{"host", world.host()}, {"version", version}}.dump());
  nlohmann::json roster = nlohmann::json::array();
  for (std::size_t r = 0; r < texts.size(); ++r) {
    auto entry = nlohmann::json::parse(texts[r]);
    entry["rank"] = r;
    roster.push_back(entry);
  }
  roster = nlohmann::json::parse(world.broadcast(roster.dump()));
  std::vector<RankInfo> ranks;
  for (const auto& entry : roster)
    ranks.push_back({entry.at("rank").get<int>(), entry.at("host").get<std::string>(), entry.at("version").get<std::string>()});
  if (const auto mismatch = version_mismatch(ranks); !mismatch.empty()) throw Error(mismatch);
  return ranks;
}

}  // namespace infermark::scaleout

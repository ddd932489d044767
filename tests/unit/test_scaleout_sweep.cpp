// Distributed sweeps: which rank runs which cell (every cell exactly once, longest estimate first,
// dealt round-robin, the same on every call), where --per-host keeps a host's results, the refusal
// of two ranks on one host under --per-host and of ranks running different builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "scaleout/cpu_binding.hpp"
#include "scaleout/distributed_sweep.hpp"
#include "scaleout/rank_roster.hpp"
#include "study/cell_assignment.hpp"

namespace infermark {
namespace {

using Shares = std::vector<std::vector<std::size_t>>;

TEST(ScaleoutSweepAssignment, EveryCellExactlyOnce) {
  const std::vector<double> estimates{70, 90, 65, 65, 300, 70, 61};
  for (int ranks = 1; ranks <= 9; ++ranks) {
    const auto shares = study::assign_cells(estimates, ranks);
    ASSERT_EQ(shares.size(), static_cast<std::size_t>(ranks));
    std::vector<std::size_t> all;
    for (const auto& share : shares) all.insert(all.end(), share.begin(), share.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6})) << ranks << " ranks";
  }
}

TEST(ScaleoutSweepAssignment, LongestFirstDealtRoundRobinTiesInStudyOrder) {
  // Longest first: 4 (300), 1 (90), 0 (70), 5 (70), 2 (65), 3 (65), 6 (61).
  EXPECT_EQ(study::assign_cells({70, 90, 65, 65, 300, 70, 61}, 2), (Shares{{4, 0, 2, 6}, {1, 5, 3}}));
  EXPECT_EQ(study::assign_cells({70, 90, 65, 65, 300, 70, 61}, 3), (Shares{{4, 5, 6}, {1, 2}, {0, 3}}));
  // Equal estimates (one scenario for every cell): plain round-robin by cell index.
  EXPECT_EQ(study::assign_cells({60, 60, 60, 60, 60}, 2), (Shares{{0, 2, 4}, {1, 3}}));
}

TEST(ScaleoutSweepAssignment, MoreRanksThanCellsLeavesSomeIdleAndOneRankTakesAll) {
  EXPECT_EQ(study::assign_cells({60, 60}, 4), (Shares{{0}, {1}, {}, {}}));
  EXPECT_EQ(study::assign_cells({60, 61, 62}, 1), (Shares{{2, 1, 0}}));
  EXPECT_EQ(study::assign_cells({}, 2), (Shares{{}, {}}));
  EXPECT_EQ(study::assign_cells({60}, 0), (Shares{{0}}));  // no ranks reads as one
}

TEST(ScaleoutSweepAssignment, TheSameOnEveryCall) {
  const std::vector<double> estimates{61, 62, 61, 62, 61, 62, 63, 60};
  EXPECT_EQ(study::assign_cells(estimates, 3), study::assign_cells(estimates, 3));
}

TEST(ScaleoutSweepFolders, PerHostFolderIsTheHostNameMadeSafe) {
  const std::filesystem::path study = "results/study-threads";
  EXPECT_EQ(study::per_host_folder(study, "node-a.cluster"), study / "node-a.cluster");
  EXPECT_EQ(study::per_host_folder(study, "a/b c"), study / "a_b_c");
  EXPECT_EQ(study::per_host_folder(study, ".."), study / "_");
  EXPECT_EQ(study::per_host_folder(study, ""), study / "unknown-host");
}

TEST(ScaleoutSweepFolders, ResultsFolderDependsOnTheSpread) {
  const std::filesystem::path study = "out/study-s";
  EXPECT_EQ(scaleout::results_folder(study, scaleout::SweepSpread::kShareCells, "h1"), study);
  EXPECT_EQ(scaleout::results_folder(study, scaleout::SweepSpread::kPerHost, "h1"), study / "h1");
  EXPECT_EQ(scaleout::name_of(scaleout::SweepSpread::kPerHost), "per host");
  EXPECT_EQ(scaleout::name_of(scaleout::SweepSpread::kShareCells), "share cells");
}

TEST(ScaleoutSweepFolders, StagingIsPerRankStableAndOutsideTheStudyFolder) {
  const std::filesystem::path study = "out/study-s";
  const auto rank1 = scaleout::staging_folder(study, 1);
  EXPECT_EQ(rank1, scaleout::staging_folder(study, 1));
  EXPECT_NE(rank1, scaleout::staging_folder(study, 2));
  EXPECT_EQ(rank1.parent_path(), scaleout::staging_folder(study, 2).parent_path());
  EXPECT_NE(rank1.parent_path(), scaleout::staging_folder("elsewhere/study-s", 1).parent_path());
  EXPECT_EQ(rank1.parent_path().parent_path(), std::filesystem::temp_directory_path());
  EXPECT_EQ(rank1.filename(), "rank-1");
}

TEST(ScaleoutSweepHosts, TwoRanksOnOneHostAreRefusedUnderPerHost) {
  EXPECT_EQ(study::shared_host_error({"a", "b", "c"}), "");
  const auto error = study::shared_host_error({"a", "b", "a", "c", "b"});
  EXPECT_NE(error.find("ranks 0, 2 all run on host a"), std::string::npos) << error;
  EXPECT_NE(error.find("ranks 1, 4 all run on host b"), std::string::npos) << error;
  EXPECT_NE(error.find("--map-by ppr:1:node"), std::string::npos) << error;
  // Names that differ only in characters a folder name cannot keep would share a folder.
  EXPECT_NE(study::shared_host_error({"x y", "x_y"}), "");
}

TEST(ScaleoutRoster, VersionsMustMatchRankZero) {
  const auto v = scaleout::infermark_version();
  EXPECT_EQ(v.rfind("infermark ", 0), 0u) << v;
  EXPECT_EQ(scaleout::version_mismatch({}), "");
  EXPECT_EQ(scaleout::version_mismatch({{0, "a", v}, {1, "b", v}}), "");
  const auto error = scaleout::version_mismatch({{0, "a", v}, {1, "b", v}, {2, "c", "infermark 0.0.9 (Debug, GCC 12.2.0, MPI)"}});
  EXPECT_NE(error.find("rank 2 on c runs infermark 0.0.9 (Debug"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 0 on a runs " + v), std::string::npos) << error;
  EXPECT_EQ(error.find("rank 1"), std::string::npos) << error;
}

TEST(ScaleoutRoster, AWorldOfOneIsItsOwnRoster) {
  auto& world = scaleout::World::get();
  if (world.distributed()) GTEST_SKIP() << "run under an MPI launcher";
  const auto roster = scaleout::gather_roster(world, "v1");
  ASSERT_EQ(roster.size(), 1u);
  EXPECT_EQ(roster[0].rank, 0);
  EXPECT_EQ(roster[0].host, scaleout::this_host_name());
  EXPECT_EQ(roster[0].version, "v1");
}

TEST(ScaleoutSweepSummary, RanksTableNamesEachRanksShare) {
  const std::vector<scaleout::RankShare> shares{{{0, "h0", "v"}, 3, 1, 2}, {{1, "h1", "v"}, 2, 0, 2}};
  const auto text = scaleout::ranks_summary(shares, scaleout::SweepSpread::kShareCells);
  EXPECT_NE(text.find("## Ranks"), std::string::npos);
  EXPECT_NE(text.find("2 MPI ranks, share cells"), std::string::npos) << text;
  EXPECT_NE(text.find("| h0 "), std::string::npos) << text;
  EXPECT_NE(text.find("| h1 "), std::string::npos) << text;
}

}  // namespace
}  // namespace infermark

namespace infermark {
namespace {

TEST(ScaleoutCpuBinding, WarnsOnlyWhenBoundToFewerCpusThanOnline) {
  EXPECT_EQ(scaleout::binding_warning({4, 4}, 0, "h"), "");
  EXPECT_EQ(scaleout::binding_warning({0, 4}, 0, "h"), "");  // unknown
  const auto warning = scaleout::binding_warning({1, 4}, 1, "node-b");
  EXPECT_NE(warning.find("rank 1 on node-b may run on 1 of 4 CPUs"), std::string::npos) << warning;
  EXPECT_NE(warning.find("--bind-to none"), std::string::npos) << warning;
  const auto mine = scaleout::this_process_binding();
  EXPECT_GE(mine.allowed, 1);
  EXPECT_GE(mine.online, mine.allowed);
}

}  // namespace
}  // namespace infermark

namespace infermark {
namespace {

TEST(ScaleoutSweepCells, RanksMustExpandTheStudyToRankZerosCellsToShareThem) {
  const std::vector<scaleout::RankInfo> roster{{0, "a", "v"}, {1, "b", "v"}};
  const std::vector<std::string> cells{"m.onnxruntime.threads-2", "m.onnxruntime.threads-4"};
  EXPECT_EQ(scaleout::different_cells_error({cells, cells}, roster), "");
  const auto error = scaleout::different_cells_error({cells, {"m.onnxruntime.threads-2", "m.onnxruntime.threads-8"}}, roster);
  EXPECT_NE(error.find("rank 1 on b expands the study to other cells"), std::string::npos) << error;
  EXPECT_NE(error.find("cell 2 is m.onnxruntime.threads-8 there, m.onnxruntime.threads-4 on rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("--per-host"), std::string::npos) << error;
  EXPECT_NE(scaleout::different_cells_error({cells, {cells[0]}}, roster).find("1 cells against rank 0's 2"), std::string::npos);
}

TEST(ScaleoutSweepCells, AWorldOfOneGathersItsOwnNames) {
  auto& world = scaleout::World::get();
  if (world.distributed()) GTEST_SKIP() << "run under an MPI launcher";
  EXPECT_EQ(scaleout::gather_cell_names(world, {"x", "y"}), (std::vector<std::vector<std::string>>{{"x", "y"}}));
}

}  // namespace
}  // namespace infermark

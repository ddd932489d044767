// Result files written by an earlier build (tests/fixtures/results/) still read, with the figures
// they hold: reports, compare and recommend read only these files, so a schema change that cannot
// read them loses every measurement users kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "result/run_result.hpp"

namespace infermark {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(INFERMARK_SOURCE_DIR) / "tests" / "fixtures" / "results";

result::RunResult read_fixture(const std::string& name) { return result::read_run_result((kFixtures / name).string()); }

void expect_measured(const result::RunResult& r) {
  EXPECT_EQ(r.status, result::CellStatus::kOk) << r.error;
  ASSERT_TRUE(r.latency_ms);
  EXPECT_GT(r.latency_ms->count, 0u);
  EXPECT_GT(r.latency_ms->mean, 0.0);
  EXPECT_GT(r.throughput.inferences_per_s, 0.0);
  EXPECT_FALSE(r.started_at.empty());
}

TEST(ResultFixtures, InProcessCellsReadWithTheirSettingsAndCrossCheck) {
  for (const auto* name : {"in_process.onnxruntime.json", "in_process.openvino.json"}) {
    SCOPED_TRACE(name);
    const auto r = read_fixture(name);
    expect_measured(r);
    EXPECT_EQ(r.origin, result::ResultOrigin::kInProcess);
    EXPECT_EQ(r.scenario.batch, 1);
    EXPECT_FALSE(r.effective_settings.empty());
    EXPECT_TRUE(r.resources);
  }
  EXPECT_TRUE(read_fixture("in_process.openvino.json").cross_check);
  EXPECT_EQ(read_fixture("in_process_batch7.onnxruntime.json").scenario.batch, 7);
}

TEST(ResultFixtures, ServedRemoteGenerationAndPipelineCellsReadWithTheirSections) {
  const auto served = read_fixture("served.onnxruntime.json");
  expect_measured(served);
  EXPECT_EQ(served.origin, result::ResultOrigin::kServed);
  const auto remote = read_fixture("remote.kserve.json");
  expect_measured(remote);
  EXPECT_EQ(remote.origin, result::ResultOrigin::kRemote);
  EXPECT_TRUE(remote.remote);
  const auto llm = read_fixture("generation.llamacpp.json");
  expect_measured(llm);
  ASSERT_TRUE(llm.generation);
  EXPECT_GT(llm.generation->decode_tokens_per_s, 0.0);
  const auto pipeline = read_fixture("pipeline.threads.json");
  expect_measured(pipeline);
  EXPECT_TRUE(pipeline.pipeline);
}

// Writing what was read and reading it again gives the same document: nothing read is dropped on
// the way back out.
TEST(ResultFixtures, WhatIsReadWritesBackTheSame) {
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const auto once = result::to_json(result::read_run_result(entry.path().string()));
    const auto copy = fs::temp_directory_path() / ("infermark_fixture_" + entry.path().filename().string());
    std::ofstream(copy) << once.dump();
    EXPECT_EQ(result::to_json(result::read_run_result(copy.string())), once);
    fs::remove(copy);
  }
}

}  // namespace
}  // namespace infermark

// Effective settings: their three states, their JSON (old files too), the thread count helpers
// backends verify with, and the threads column that shows the state.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/effective_setting.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "report/comparison_table.hpp"

namespace infermark {
namespace {

TEST(EffectiveSetting, JsonKeepsTheStateAndAppliedForOlderReaders) {
  for (const auto state : {SettingState::kVerified, SettingState::kUnverified, SettingState::kNotApplied}) {
    const EffectiveSetting s{"intra_op_threads", "2", "2", state, "counted"};
    const nlohmann::json j = s;
    EXPECT_EQ(j.at("state"), std::string(name_of(state)));
    EXPECT_EQ(j.at("applied"), state != SettingState::kNotApplied);
    const auto back = j.get<EffectiveSetting>();
    EXPECT_EQ(back.state, state);
    EXPECT_EQ(back.note, "counted");
  }
}

// Files written before `state` existed: nothing in them was verified.
TEST(EffectiveSetting, AFileWithoutStateReadsAppliedAsUnverified) {
  const auto applied =
      nlohmann::json::parse(R"({"key": "intra_op_threads", "requested": "2", "effective": "2", "applied": true})");
  EXPECT_EQ(applied.get<EffectiveSetting>().state, SettingState::kUnverified);
  EXPECT_EQ(applied.get<EffectiveSetting>().note, "");
  auto refused = applied;
  refused["applied"] = false;
  EXPECT_EQ(refused.get<EffectiveSetting>().state, SettingState::kNotApplied);
  auto unknown = applied;
  unknown["state"] = "probably";
  try {
    (void)unknown.get<EffectiveSetting>();
    FAIL() << "read an unknown state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("settings.effective[intra_op_threads].state probably"), std::string::npos) << e.what();
  }
}

TEST(EffectiveSetting, ACountReadBackIsVerifiedOnlyWhenItIsWhatWasAsked) {
  const auto as_asked = observed_threads(2, 2, "counted");
  EXPECT_EQ(as_asked.state, SettingState::kVerified);
  EXPECT_EQ(as_asked.requested, "2");
  const auto framework_default = observed_threads(0, 4, "counted");
  EXPECT_EQ(framework_default.state, SettingState::kVerified);
  EXPECT_EQ(framework_default.requested, "");
  EXPECT_EQ(framework_default.effective, "4");
  const auto ignored = observed_threads(3, 2, "read back");
  EXPECT_EQ(ignored.state, SettingState::kNotApplied);
  EXPECT_EQ(ignored.effective, "2");
  EXPECT_EQ(ignored.note, "the framework kept 2 (read back)");
  EXPECT_EQ(observed_threads(0, 2, "", "inter_op_threads").key, "inter_op_threads");
  EXPECT_EQ(unverified_threads(2, "2", "no getter").state, SettingState::kUnverified);
}

// A thread started inside the call and alive after it is counted; one that ended is not.
TEST(ThreadCount, CountsTheThreadsACallLeavesRunning) {
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::thread worker;
  const auto started = threads_started_by([&] {
    worker = std::thread([&] {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return release; });
    });
    std::thread([] {}).join();
  });
  {
    const std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  worker.join();
  ASSERT_TRUE(started.has_value()) << "/proc/self/task unreadable";
  EXPECT_EQ(*started, 1);
  EXPECT_EQ(threads_started_by([] {}), 0);
}

TEST(ThreadsColumn, MarksUnverifiedAndUnappliedCounts) {
  result::RunResult r;
  EXPECT_EQ(report::threads_cell(r), "-");
  r.effective_settings = {{"intra_op_threads", "2", "2", SettingState::kVerified, "counted"}};
  EXPECT_EQ(report::threads_cell(r), "2");
  r.effective_settings[0].state = SettingState::kUnverified;
  EXPECT_EQ(report::threads_cell(r), "2 (unverified)");
  r.effective_settings = {{"intra_op_threads", "3", "2", SettingState::kNotApplied, "the framework kept 2"}};
  EXPECT_EQ(report::threads_cell(r), "2 (asked 3)");
}

}  // namespace
}  // namespace infermark

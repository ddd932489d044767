#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/comparison.hpp"
#include "process/child_process.hpp"
#include "unit/process_watch.hpp"

namespace infermark::harness {
namespace {

std::filesystem::path temp_log(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("infermark_child_" + name + ".log");
  std::filesystem::remove(path);
  return path;
}

process::ChildOutcome sh(const std::string& script, double timeout_s = 10, const std::string& log = "sh") {
  return process::run_child({"/bin/sh", "-c", script}, temp_log(log), {timeout_s});
}

}  // namespace

TEST(ChildProcess, ReportsExitCodes) {
  EXPECT_EQ(sh("exit 0").kind, process::ChildOutcome::Kind::kExited);
  const auto failed = sh("exit 3");
  EXPECT_EQ(failed.kind, process::ChildOutcome::Kind::kExited);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.describe(), "exited with code 3");
}

TEST(ChildProcess, ClassifiesACrashBySignal) {
  const auto crashed = sh("kill -SEGV $$");
  EXPECT_EQ(crashed.kind, process::ChildOutcome::Kind::kSignaled);
  EXPECT_EQ(crashed.describe(), "crashed: SIGSEGV");
  EXPECT_EQ(sh("kill -ABRT $$").describe(), "crashed: SIGABRT");
}

TEST(ChildProcess, StopsAHangAtTheTimeout) {
  const auto hung = sh("sleep 30", 0.3);
  EXPECT_EQ(hung.kind, process::ChildOutcome::Kind::kTimedOut);
  EXPECT_NE(hung.describe().find("timed out"), std::string::npos);
}

TEST(ChildProcess, StopsAChildOverItsMemoryLimitAndSaysSo) {
  // 400 MiB touched (bytearray zero-fills) against a 100 MiB limit; it would sleep long after.
  const auto outcome = process::run_child({"/usr/bin/python3", "-c", "b = bytearray(400 << 20); import time; time.sleep(30)"},
                                          temp_log("memory"), {.timeout_s = 20, .memory_mb = 100});
  EXPECT_EQ(outcome.kind, process::ChildOutcome::Kind::kMemoryLimit);
  EXPECT_GT(outcome.rss_mb, 100);
  EXPECT_NE(outcome.describe().find("over the limit of 100 MiB"), std::string::npos) << outcome.describe();
  // Under the limit nothing happens.
  EXPECT_EQ(process::run_child({"/usr/bin/python3", "-c", "b = bytearray(1 << 20)"}, temp_log("small"),
                               {.timeout_s = 20, .memory_mb = 200})
                .kind,
            process::ChildOutcome::Kind::kExited);
}

TEST(ChildProcess, ReportsAProgramThatCannotStart) {
  const auto outcome = process::run_child({"/nonexistent/program"}, temp_log("missing"), {5});
  EXPECT_EQ(outcome.kind, process::ChildOutcome::Kind::kFailedToStart);
}

TEST(ChildProcess, DiesWithAParentKilledBySigkill) {
  // A parent killed by SIGKILL (a CI timeout, the out-of-memory killer) cannot stop its child
  // itself: the kernel must, or the child goes on measuring beside whatever runs next.
  const auto pid_file = temp_log("grandchild_pid");
  const auto command = "echo $$ > " + pid_file.string() + "; exec sleep 30";
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    process::run_child({"/bin/sh", "-c", command}, temp_log("orphan"), {60});
    _exit(0);
  }
  pid_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream(pid_file) >> child;
  }
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  ASSERT_GT(child, 0) << "the child never started";
  const bool gone = infermark::testing::wait_until_gone(child, 2);
  if (!gone) kill(child, SIGKILL);  // not left running after the test
  EXPECT_TRUE(gone) << "pid " << child << " outlived its parent";
}

TEST(ChildProcess, StderrGoesToTheLogAndStagesAreRead) {
  const auto log = temp_log("stages");
  process::run_child({"/bin/sh", "-c",
                      "echo 'infermark-stage: loading the model' >&2; echo 'boom' >&2; "
                      "echo 'infermark-stage: running' >&2; kill -SEGV $$"},
                     log, {10});
  EXPECT_EQ(last_stage(log), "running");
  std::ifstream in(log);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(content.find("boom"), std::string::npos);
  EXPECT_EQ(last_stage(temp_log("absent")), "");
}

}  // namespace infermark::harness

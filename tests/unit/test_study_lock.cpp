// One sweep at a time per study folder, held by the sweep and by every worker it starts.
#include "study/study_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "core/error.hpp"
#include "process/child_process.hpp"
#include "unit/process_watch.hpp"

namespace infermark::study {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("infermark_study_lock_" + name);
  fs::remove_all(dir);
  return dir;
}

// The refusal of a second lock on `folder`, or "" when it was granted.
std::string refusal(const fs::path& folder) {
  try {
    const StudyFolderLock second(folder);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

TEST(StudyFolderLock, RefusesAFolderAnotherProcessHoldsNamingItAndIsFreeOnceItDies) {
  const auto folder = scratch("held");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    try {
      const StudyFolderLock lock(folder);
      (void)!write(ready[1], "x", 1);
      pause();
    } catch (...) {}
    _exit(1);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const auto error = refusal(folder);
  EXPECT_NE(error.find(folder.string() + ": another sweep of this study is still running"), std::string::npos) << error;
  EXPECT_NE(error.find("pid " + std::to_string(holder) + " ("), std::string::npos) << error;
  // Killed with SIGKILL, the holder leaves no stale lock: the kernel drops it with the process.
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  EXPECT_EQ(refusal(folder), "");
  close(ready[0]);
  close(ready[1]);
  fs::remove_all(folder);
}

TEST(StudyFolderLock, StaysHeldByAWorkerThatOutlivesTheSweepsOwnHold) {
  const auto folder = scratch("inherited");
  std::atomic<bool> stop{false};
  std::thread worker;
  std::size_t started = 0;
  {
    const StudyFolderLock lock(folder);
    worker = std::thread([&] { process::run_child({"/bin/sleep", "30"}, folder / "worker.log", {30}, &stop); });
    started = testing::wait_for_children(getpid(), "30", 1, 10).size();  // "30": the first argument once execv ran
  }
  if (started != 1) {
    stop = true;
    worker.join();
    FAIL() << "the worker did not start";
  }
  // The sweep's own descriptor is closed; the worker's inherited one still holds the folder.
  const auto error = refusal(folder);
  EXPECT_NE(error.find("(sleep 30)"), std::string::npos) << error;
  stop = true;  // SIGINT ends the sleep
  worker.join();
  EXPECT_EQ(refusal(folder), "");
  fs::remove_all(folder);
}

}  // namespace infermark::study

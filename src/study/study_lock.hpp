// One sweep at a time per study folder: a resumed sweep must not measure beside a worker of an
// earlier one still running (both would measure a loaded machine and the folder would get two
// writers of one cell).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace infermark::study {

// An exclusive flock on <folder>/.sweep.lock for as long as the object lives. The descriptor is
// inherited by every process the sweep starts, so the folder stays locked until the last of them
// has ended, not only the sweep itself; the kernel drops the lock with the last one, so a killed
// sweep leaves no stale lock behind.
class StudyFolderLock {
 public:
  // Creates the folder if needed. Refuses (Error naming the folder and the processes holding it)
  // rather than waiting: a leftover worker may run for the rest of its cell.
  explicit StudyFolderLock(const std::filesystem::path& folder);
  ~StudyFolderLock();
  StudyFolderLock(const StudyFolderLock&) = delete;
  StudyFolderLock& operator=(const StudyFolderLock&) = delete;

  static constexpr const char* kFileName = ".sweep.lock";

 private:
  int fd_ = -1;
};

// "pid 12 (infermark worker)" for each other process that has `file` open, read from /proc
// (processes of other users are not readable there and not listed).
std::vector<std::string> processes_with_open(const std::filesystem::path& file);

}  // namespace infermark::study

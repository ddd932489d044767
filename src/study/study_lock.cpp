#include "study/study_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/error.hpp"

namespace infermark::study {
namespace {

namespace fs = std::filesystem;

// "infermark worker": the program's file name and its first argument (the subcommand).
std::string command_of(const fs::path& proc_dir) {
  std::ifstream in(proc_dir / "cmdline");
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto program_end = raw.find('\0');
  std::string text = fs::path(raw.substr(0, program_end)).filename().string();
  if (program_end != std::string::npos && program_end + 1 < raw.size()) text += " " + std::string(raw.c_str() + program_end + 1);
  return text;
}

bool has_open(const fs::path& proc_dir, const struct stat& target) {
  std::error_code error;
  for (fs::directory_iterator fd(proc_dir / "fd", error), end; !error && fd != end; fd.increment(error)) {
    struct stat opened {};
    if (::stat(fd->path().c_str(), &opened) == 0 && opened.st_dev == target.st_dev && opened.st_ino == target.st_ino) return true;
  }
  return false;
}

bool try_lock(int fd) { return flock(fd, LOCK_EX | LOCK_NB) == 0; }

}  // namespace

std::vector<std::string> processes_with_open(const fs::path& file) {
  std::vector<std::string> holders;
  struct stat target {};
  if (::stat(file.c_str(), &target) != 0) return holders;
  const auto self = std::to_string(getpid());
  std::error_code error;
  for (fs::directory_iterator entry("/proc", error), end; !error && entry != end; entry.increment(error)) {
    const auto pid = entry->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    if (has_open(entry->path(), target)) holders.push_back("pid " + pid + " (" + command_of(entry->path()) + ")");
  }
  return holders;
}

StudyFolderLock::StudyFolderLock(const fs::path& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) throw Error(folder.string() + ": cannot create the study folder: " + error.message());
  const auto file = folder / kFileName;
  // No O_CLOEXEC: the workers inherit the descriptor, and with it the lock.
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd_ < 0) throw Error(file.string() + ": cannot open the study's lock file: " + std::strerror(errno));
  if (try_lock(fd_)) return;
  auto holders = processes_with_open(file);
  // No process lists the file open but the lock is still held: a holder that is exiting (killed)
  // has let go of its descriptors a moment before the kernel releases its lock, a window a loaded
  // machine widens. Up to a second for it, then the refusal.
  for (int attempt = 0; holders.empty() && attempt < 20; ++attempt) {
    if (try_lock(fd_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    holders = processes_with_open(file);
  }
  ::close(fd_);
  std::string who;
  for (const auto& holder : holders) who += (who.empty() ? "" : ", ") + holder;
  throw Error(folder.string() + ": another sweep of this study is still running (" +
              (who.empty() ? "its processes are not visible to this user" : who) + " holding " + file.string() +
              "); a sweep beside it would measure a loaded machine: wait for it to end or stop it, then rerun");
}

StudyFolderLock::~StudyFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace infermark::study

// Runs a command as a child process with a time limit and classifies how it ended, so that a
// framework that crashes, hangs or runs out of memory becomes a recorded outcome, not our crash.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace infermark::process {

// What a child may use before it is stopped.
struct ChildLimits {
  double timeout_s = 600.0;
  // Resident memory in MiB (0: none), like a container's memory limit. Sampled every 20 ms, so a
  // burst can overshoot by what it allocates in that time before the child is killed.
  double memory_mb = 0.0;
};

struct ChildOutcome {
  enum class Kind { kExited, kSignaled, kTimedOut, kMemoryLimit, kFailedToStart } kind = Kind::kExited;
  int exit_code = 0;             // kExited
  int signal = 0;                // kSignaled (also the signal that ended a kTimedOut child)
  std::string describe() const;  // "exited with code 1", "crashed: SIGSEGV", "timed out after 5 s"
  ChildLimits limits;
  double rss_mb = 0.0;  // kMemoryLimit: the resident memory that crossed the limit
};

// Runs argv[0] with arguments (no shell) in its own process group, stdout inherited, stderr
// appended to `stderr_log`. After `limits.timeout_s` the group gets SIGTERM, then SIGKILL two seconds
// later, so nothing the child started outlives it; past `limits.memory_mb` it gets SIGKILL at once
// (a process out of memory may not be able to stop cleanly). When `stop` becomes true the group gets one
// SIGINT (the terminal's Ctrl-C reaches only our own group) and the child may finish cleanly.
// `on_tick`, when set, is called about twice a second with the seconds elapsed (for progress).
// The child dies with the thread that called run_child (PR_SET_PDEATHSIG), so a parent killed by
// SIGKILL leaves no child running; file descriptors without FD_CLOEXEC are inherited (a sweep's
// study lock stays held while any of its workers lives).
ChildOutcome run_child(const std::vector<std::string>& argv, const std::filesystem::path& stderr_log, const ChildLimits& limits,
                       const std::atomic<bool>* stop = nullptr, const std::function<void(double)>& on_tick = {});

// "SIGSEGV" for 11, "signal 64" for unnamed ones.
std::string signal_name(int signal);

}  // namespace infermark::process

#include "process/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/clock.hpp"
#include "probes/memory.hpp"

namespace infermark::process {
namespace {

// Runs in the forked child, so it allocates nothing: `args` was built before the fork.
[[noreturn]] void exec_child(char* const* args, const std::filesystem::path& stderr_log, pid_t parent) {
  // Die with the parent: a `run` or `sweep` killed by SIGKILL (a CI timeout, the out-of-memory killer,
  // kill -9) must not leave its worker measuring on a machine the next run shares. The signal comes
  // when the *thread* that forked ends; run_child waits for the child on that thread, so that thread
  // outlives the child. A parent gone before prctl took effect sends nothing: getppid() then names
  // another process, and the child gives up at once. The setting survives execv.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  setpgid(0, 0);
  int fd = open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  execv(args[0], args);
  dprintf(STDERR_FILENO, "cannot start %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

ChildOutcome classify(int status) {
  ChildOutcome outcome;
  if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::Kind::kSignaled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.exit_code = WEXITSTATUS(status);
    if (outcome.exit_code == 127) outcome.kind = ChildOutcome::Kind::kFailedToStart;
  }
  return outcome;
}

}  // namespace

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal " + std::to_string(signal);
  }
}

std::string ChildOutcome::describe() const {
  switch (kind) {
    case Kind::kExited:
      return "exited with code " + std::to_string(exit_code);
    case Kind::kSignaled:
      return "crashed: " + signal_name(signal) + (signal == SIGKILL ? " (killed, often by the out-of-memory killer)" : "");
    case Kind::kTimedOut:
      return "timed out after " + std::to_string(static_cast<long long>(limits.timeout_s)) + " s";
    case Kind::kMemoryLimit:
      return "stopped at the memory limit: resident memory reached " + std::to_string(static_cast<long long>(rss_mb)) +
             " MiB, over the limit of " + std::to_string(static_cast<long long>(limits.memory_mb)) + " MiB";
    case Kind::kFailedToStart:
      return "worker could not be started";
  }
  return "unknown outcome";
}

ChildOutcome run_child(const std::vector<std::string>& argv, const std::filesystem::path& stderr_log, const ChildLimits& limits,
                       const std::atomic<bool>* stop, const std::function<void(double)>& on_tick) {
  const auto ended = [&limits](ChildOutcome::Kind kind, int signal = 0) {
    ChildOutcome outcome;
    outcome.kind = kind;
    outcome.signal = signal;
    outcome.limits = limits;
    return outcome;
  };
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return ended(ChildOutcome::Kind::kFailedToStart);
  if (pid == 0) exec_child(args.data(), stderr_log, parent);
  setpgid(pid, pid);  // also here: whichever of parent and child runs first sets it
  bool stop_forwarded = false;

  const auto started = mono_now_ns();
  const auto deadline = started + static_cast<std::int64_t>(limits.timeout_s * 1e9);
  std::int64_t next_tick = started + 500'000'000;
  std::int64_t kill_at = 0;
  double rss_over_limit_mb = 0.0;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      kill(-pid, SIGKILL);  // anything the child left behind in its group
      if (kill_at != 0) return ended(ChildOutcome::Kind::kTimedOut, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      if (rss_over_limit_mb > 0) {
        auto outcome = ended(ChildOutcome::Kind::kMemoryLimit, SIGKILL);
        outcome.rss_mb = rss_over_limit_mb;
        return outcome;
      }
      auto outcome = classify(status);
      outcome.limits = limits;
      return outcome;
    }
    if (done < 0 && errno != EINTR) return ended(ChildOutcome::Kind::kFailedToStart);
    const auto now = mono_now_ns();
    if (on_tick && now >= next_tick) {
      on_tick(static_cast<double>(now - started) * 1e-9);
      next_tick = now + 500'000'000;
    }
    if (stop && stop->load() && !stop_forwarded) {
      kill(-pid, SIGINT);
      stop_forwarded = true;
    }
    if (limits.memory_mb > 0 && rss_over_limit_mb == 0) {
      if (const double rss = probes::process_rss_mb(pid); rss > limits.memory_mb) {
        rss_over_limit_mb = rss;
        kill(-pid, SIGKILL);
      }
    }
    if (kill_at == 0 && now >= deadline) {
      kill(-pid, SIGTERM);
      kill_at = now + 2'000'000'000;
    } else if (kill_at != 0 && now >= kill_at) {
      kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace infermark::process

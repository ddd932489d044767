// Watching processes from a test through /proc: a process's children and command line, and
// whether it has ended. A zombie counts as ended: it runs nothing, and reaping an orphan is its
// new parent's business, not the test's.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace infermark::testing {

struct ProcessStat {
  char state = '\0';  // '\0': no such process
  pid_t parent = 0;
};

inline ProcessStat process_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto name_end = line.rfind(')');  // the command name may hold spaces and parentheses
  if (name_end == std::string::npos || name_end + 2 >= line.size()) return {};
  std::istringstream rest(line.substr(name_end + 2));
  ProcessStat stat;
  rest >> stat.state >> stat.parent;
  return stat;
}

inline bool process_gone(pid_t pid) {
  const char state = process_stat(pid).state;
  return state == '\0' || state == 'Z' || state == 'X';
}

inline bool wait_until_gone(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!process_gone(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline std::vector<std::string> process_argv(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  std::istringstream fields(raw);
  for (std::string arg; std::getline(fields, arg, '\0');) argv.push_back(arg);
  return argv;
}

// Living children of `parent` whose first argument is `subcommand` (every child when it is empty).
inline std::vector<pid_t> children_of(pid_t parent, const std::string& subcommand = "") {
  std::vector<pid_t> children;
  std::error_code error;
  for (std::filesystem::directory_iterator entry("/proc", error), end; !error && entry != end; entry.increment(error)) {
    const auto name = entry->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (process_stat(pid).parent != parent || process_gone(pid)) continue;
    const auto argv = process_argv(pid);
    if (subcommand.empty() || (argv.size() > 1 && argv[1] == subcommand)) children.push_back(pid);
  }
  return children;
}

// Waits up to `seconds` until `parent` has at least `count` such children; returns those it has.
inline std::vector<pid_t> wait_for_children(pid_t parent, const std::string& subcommand, std::size_t count, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto children = children_of(parent, subcommand);
  while (children.size() < count && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    children = children_of(parent, subcommand);
  }
  return children;
}

}  // namespace infermark::testing

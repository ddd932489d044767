#include "backends/thread_count.hpp"

#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

namespace infermark {
namespace {

std::optional<std::set<std::string>> task_ids() {
  std::error_code error;
  std::filesystem::directory_iterator it("/proc/self/task", error);
  if (error) return std::nullopt;
  std::set<std::string> ids;
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) return std::nullopt;
    ids.insert(it->path().filename().string());
  }
  return ids;
}

std::string count_or_empty(int requested) { return requested > 0 ? std::to_string(requested) : ""; }

}  // namespace

std::optional<int> threads_started_by(const std::function<void()>& call) {
  static std::mutex counting;
  const std::lock_guard lock(counting);
  const auto before = task_ids();
  call();
  const auto after = task_ids();
  if (!before || !after) return std::nullopt;
  int started = 0;
  for (const auto& id : *after) started += before->count(id) == 0 ? 1 : 0;
  return started;
}

EffectiveSetting observed_threads(int requested, int observed, const std::string& how, const std::string& key) {
  return read_back(key, count_or_empty(requested), std::to_string(observed), how);
}

EffectiveSetting counted_pool_threads(int requested, int started, const std::string& starter, const std::string& note) {
  return observed_threads(
      requested, started + 1,
      "counted: " + starter + " started " + std::to_string(started) + " pool thread(s) beside the calling thread" + note);
}

EffectiveSetting no_inter_op_threads(int requested, const std::string& why) {
  const bool applied = requested == 0;
  return {"inter_op_threads", count_or_empty(requested), "not applicable", configured_state(applied), applied ? "" : why};
}

EffectiveSetting unverified_threads(int requested, const std::string& effective, const std::string& why) {
  return {"intra_op_threads", count_or_empty(requested), effective, SettingState::kUnverified, why};
}

}  // namespace infermark

#include "serve/dynamic_batcher.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace infermark::serve {

bool DynamicBatcher::submit(PendingInference& request) {
  {
    std::lock_guard lock(mutex_);
    if (closed_ || queue_.size() >= policy_.max_queue) return false;
    request.sequence = next_sequence_++;
    queue_.push_back(std::move(request));
  }
  arrived_.notify_all();
  return true;
}

std::int64_t DynamicBatcher::ready_rows(const std::string& signature) const {
  std::int64_t rows = 0;
  for (const auto& pending : queue_) {
    if (pending.signature != signature) continue;
    if (rows + pending.rows > policy_.max_batch_rows) break;
    rows += pending.rows;
  }
  return rows;
}

bool DynamicBatcher::is_preferred(std::int64_t rows) const {
  return std::find(policy_.preferred_rows.begin(), policy_.preferred_rows.end(), rows) != policy_.preferred_rows.end();
}

std::vector<PendingInference> DynamicBatcher::next_batch() {
  std::unique_lock lock(mutex_);
  for (;;) {
    arrived_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return {};
    const auto head = queue_.front().sequence;
    const auto signature = queue_.front().signature;
    if (policy_.max_batch_rows > 1) {
      // Wait for more compatible requests until the batch is full, preferred, or the oldest has waited long enough.
      const auto ready_at =
          std::chrono::steady_clock::time_point(std::chrono::nanoseconds(queue_.front().enqueued_ns)) + policy_.max_queue_delay;
      bool head_taken = false;
      for (;;) {
        const auto rows = ready_rows(signature);
        if (rows >= policy_.max_batch_rows || is_preferred(rows) || closed_ || std::chrono::steady_clock::now() >= ready_at)
          break;
        arrived_.wait_until(lock, ready_at);
        if (queue_.empty() || queue_.front().sequence != head) {
          head_taken = true;  // another instance took it: start over with the new head
          break;
        }
      }
      if (head_taken) continue;
    }
    std::vector<PendingInference> batch;
    std::int64_t rows = 0;
    for (auto it = queue_.begin(); it != queue_.end();) {
      const bool fits = batch.empty() || (it->signature == signature && rows + it->rows <= policy_.max_batch_rows);
      if (!fits) {
        if (rows >= policy_.max_batch_rows) break;
        ++it;
        continue;
      }
      rows += it->rows;
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
      if (policy_.max_batch_rows <= 1) break;
    }
    return batch;
  }
}

void DynamicBatcher::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  arrived_.notify_all();
}

std::size_t DynamicBatcher::depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool DynamicBatcher::idle() const {
  std::lock_guard lock(mutex_);
  return !closed_ && queue_.empty();
}

}  // namespace infermark::serve

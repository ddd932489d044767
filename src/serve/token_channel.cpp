#include "serve/token_channel.hpp"

namespace infermark::serve {

void TokenChannel::push(StreamChunk chunk) {
  std::function<void(std::vector<StreamChunk>)> deliver;
  std::vector<StreamChunk> batch;
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(chunk));
    if (!waiting_) return;
    deliver = std::move(waiting_);
    waiting_ = nullptr;
    batch.swap(pending_);
  }
  deliver(std::move(batch));
}

void TokenChannel::next(std::function<void(std::vector<StreamChunk>)> deliver) {
  std::vector<StreamChunk> batch;
  {
    std::lock_guard lock(mutex_);
    if (pending_.empty()) {
      waiting_ = std::move(deliver);
      return;
    }
    batch.swap(pending_);
  }
  deliver(std::move(batch));
}

}  // namespace infermark::serve

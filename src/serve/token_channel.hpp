// A one-consumer channel from the generation engine's stepping thread to the coroutine answering
// the request: text pieces as they are generated, then the end (or an error). The coroutine
// awaits the next batch without blocking an io thread; a client that leaves cancels the request.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "openai/openai_protocol.hpp"

namespace infermark::serve {

using openai::FinishReason;

struct StreamChunk {
  std::string text;  // valid UTF-8 as far as the model produced it
  bool done = false;
  FinishReason finish = FinishReason::kLength;
  std::string error;  // set with done when generation failed
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

class TokenChannel {
 public:
  void push(StreamChunk chunk);
  // Hands everything pushed since the last call to `deliver`, at once if there is something,
  // else as soon as something is pushed. One call outstanding at a time.
  void next(std::function<void(std::vector<StreamChunk>)> deliver);
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  std::mutex mutex_;
  std::vector<StreamChunk> pending_;
  std::function<void(std::vector<StreamChunk>)> waiting_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace infermark::serve

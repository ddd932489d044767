// Server-sent events, parsed incrementally as a stream's bytes arrive in arbitrary pieces: each
// complete event's data (its `data:` lines joined by newlines) is handed over once the blank line
// that ends it is in. Comments (`:`) and other fields are skipped.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace infermark::remote {

class SseParser {
 public:
  using Event = std::function<void(std::string_view data)>;
  void feed(std::string_view bytes, const Event& on_event);
  // What is left unterminated when the stream ends (a server that omits the final blank line).
  void finish(const Event& on_event);

 private:
  void line(std::string_view text, const Event& on_event);
  std::string pending_;  // bytes of an incomplete line
  std::string data_;     // data lines of the event being read
  bool has_data_ = false;
};

}  // namespace infermark::remote

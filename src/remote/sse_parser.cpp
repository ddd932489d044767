#include "remote/sse_parser.hpp"

namespace infermark::remote {

void SseParser::feed(std::string_view bytes, const Event& on_event) {
  pending_.append(bytes);
  std::size_t begin = 0;
  for (;;) {
    const auto end = pending_.find('\n', begin);
    if (end == std::string::npos) break;
    auto text = std::string_view(pending_).substr(begin, end - begin);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line(text, on_event);
    begin = end + 1;
  }
  pending_.erase(0, begin);
}

void SseParser::finish(const Event& on_event) {
  if (!pending_.empty()) {
    auto rest = std::move(pending_);
    pending_.clear();
    line(rest, on_event);
  }
  line("", on_event);
}

void SseParser::line(std::string_view text, const Event& on_event) {
  if (text.empty()) {  // the blank line ends an event
    if (has_data_) on_event(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // a comment (keep-alive)
  const auto colon = text.find(':');
  const auto field = text.substr(0, colon);
  if (field != "data") return;
  auto value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

}  // namespace infermark::remote

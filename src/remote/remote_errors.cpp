#include "remote/remote_errors.hpp"

#include <algorithm>

#include "core/json_text.hpp"

namespace infermark::remote {
namespace {

constexpr std::size_t kExamples = 5;
constexpr std::size_t kExampleChars = 300;

// grpc::StatusCode's names, by value (the gRPC headers stay out of this file).
std::string grpc_code_name(int code) {
  static const char* const kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  return code >= 0 && code < static_cast<int>(std::size(kNames)) ? kNames[code] : "CODE_" + std::to_string(code);
}

// A string found under the keys servers put their error messages at, or "".
std::string message_field(const nlohmann::json& j) {
  if (!j.is_object()) return "";
  for (const char* key : {"error", "message", "detail"}) {
    const auto it = j.find(key);
    if (it == j.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (auto nested = message_field(*it); !nested.empty()) return nested;  // OpenAI: {"error": {"message": ...}}
  }
  return "";
}

std::string collapse_whitespace(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string server_message(std::string_view body, std::size_t limit) {
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  auto text = parsed.is_discarded() ? std::string() : collapse_whitespace(message_field(parsed));
  if (text.empty()) text = collapse_whitespace(body);  // plain text, or JSON in a shape not known here: as sent
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return valid_utf8(text);
}

std::string http_error_text(unsigned status, std::string_view body) {
  const auto message = server_message(body);
  return "HTTP " + std::to_string(status) + (message.empty() ? "" : ": " + message);
}

void RemoteErrors::remember(const std::string& example) {
  if (examples_.size() >= kExamples) return;
  auto text = valid_utf8(example.substr(0, kExampleChars));
  if (std::find(examples_.begin(), examples_.end(), text) == examples_.end()) examples_.push_back(std::move(text));
}

void RemoteErrors::count_transport(net::TransportError error, const std::string& message) {
  std::lock_guard lock(mutex_);
  ++transport_[std::string(net::name_of(error))];
  remember(message);
}

void RemoteErrors::count_status(unsigned status, std::string_view body) {
  std::lock_guard lock(mutex_);
  ++status_[std::to_string(status)];
  remember(http_error_text(status, body));
}

void RemoteErrors::count_grpc(int code, const std::string& message) {
  std::lock_guard lock(mutex_);
  ++grpc_status_[grpc_code_name(code)];
  remember(message);
}

void RemoteErrors::count_stream_error(const std::string& message) {
  std::lock_guard lock(mutex_);
  ++in_stream_;
  remember("in the stream: " + message);
}

bool RemoteErrors::check(const net::ClientResponse& response) {
  if (response.error != net::TransportError::kNone) {
    count_transport(response.error, response.error_text);
    return false;
  }
  if (response.status / 100 != 2) {
    count_status(response.status, response.body);
    return false;
  }
  return true;
}

std::uint64_t RemoteErrors::total() const {
  std::lock_guard lock(mutex_);
  std::uint64_t n = in_stream_;
  for (const auto& [_, count] : transport_) n += count;
  for (const auto& [_, count] : status_) n += count;
  for (const auto& [_, count] : grpc_status_) n += count;
  return n;
}

nlohmann::json RemoteErrors::to_json() const {
  const auto sum = total();
  std::lock_guard lock(mutex_);
  return {{"total", sum},
          {"transport", transport_},
          {"http_status", status_},
          {"grpc_status", grpc_status_},
          {"in_stream", in_stream_},
          {"examples", examples_}};
}

}  // namespace infermark::remote

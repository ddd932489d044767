// OpenAI-compatible request and response bodies (/v1/completions, /v1/chat/completions), as
// vLLM and llama-server speak them: parsing with errors that name the field, responses whole or
// as server-sent-event chunks. Nothing here knows about HTTP or the model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/generator.hpp"
#include "serve/token_channel.hpp"

namespace infermark::serve {

struct CompletionRequest {
  bool chat = false;
  std::string model;
  std::string prompt;                 // /v1/completions
  std::vector<ChatMessage> messages;  // /v1/chat/completions
  int max_tokens = 16;
  Sampling sampling{1.0f, 1.0f, 0};  // OpenAI's defaults: temperature 1, top_p 1
  bool seed_given = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Throws RequestError(400) naming the field.
CompletionRequest parse_completion_request(std::string_view body, bool chat);

struct CompletionIdentity {
  std::string id;  // "cmpl-..." / "chatcmpl-..."
  std::string model;
  std::int64_t created = 0;  // seconds since the epoch
  std::string variant;       // which variant served it (also in the X-Model-Variant header)
};

// The whole answer of a non-streamed request.
std::string completion_body(const CompletionRequest& request, const CompletionIdentity& identity, const std::string& text,
                            FinishReason finish, int prompt_tokens, int completion_tokens);
// One SSE event ("data: {...}\n\n"): a text piece, the first chat chunk (role only: `role_only`),
// or the last one (with `finish`).
std::string stream_event(const CompletionRequest& request, const CompletionIdentity& identity, const std::string& text,
                         std::optional<FinishReason> finish, bool role_only = false);
// The usage event sent last when stream_options.include_usage is set (empty choices).
std::string usage_event(const CompletionRequest& request, const CompletionIdentity& identity, int prompt_tokens,
                        int completion_tokens);
// An error inside an already started stream, then the end marker.
std::string stream_error_event(const std::string& message);
// OpenAI's error body: {"error": {"message", "type", "code"}}.
std::string openai_error_body(int status, const std::string& message);

}  // namespace infermark::serve

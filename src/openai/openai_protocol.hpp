// OpenAI-compatible request and response bodies (/v1/completions, /v1/chat/completions), as
// vLLM and llama-server speak them, for both sides: the server (`serve`) parses requests with
// errors that name the field and writes answers whole or as server-sent-event chunks; the client
// (`load --protocol openai`) writes requests and reads answers. Nothing here knows about HTTP,
// the model or the load.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/generator.hpp"

namespace infermark::openai {

enum class FinishReason { kLength, kStop };
std::string_view finish_reason_name(FinishReason reason);  // OpenAI's "length", "stop"

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
  // Request fields this server has no use for (OpenAI accepts and ignores them; so does serve,
  // counting them per name so a user sees what had no effect), in the body's order.
  std::vector<std::string> ignored_fields;
};

// Throws infermark::Error naming the field (the server answers it with 400). `ignore_eos` and
// `min_tokens` (what benchmark clients send to fix output lengths) become sampling.min_tokens.
CompletionRequest parse_completion_request(std::string_view body, bool chat);

// The client's side: the body of `request` (model, prompt or messages, max_tokens, temperature,
// seed when given, stream and stream_options.include_usage), with "ignore_eos" when asked and
// `extra` fields merged last (they win).
std::string completion_request_body(const CompletionRequest& request, bool ignore_eos, const nlohmann::json& extra);

// What one answer (non-streamed) or one streamed event says.
struct AnswerPiece {
  std::optional<std::string> error;                     // the server's error object, as JSON text
  std::optional<int> prompt_tokens, completion_tokens;  // from "usage"
  bool has_text = false;                                // the first choice carries text ("text", or "delta"/"message" content)
  std::string text;                                     // that text
};
AnswerPiece read_answer_piece(const nlohmann::json& piece, bool chat);

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

}  // namespace infermark::openai

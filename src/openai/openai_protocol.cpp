#include "openai/openai_protocol.hpp"

#include <set>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace infermark::openai {
namespace {

using nlohmann::json;

Error bad_request(const std::string& message) { return Error(message); }

// Every request field parse_completion_request reads; any other is accepted and has no effect.
const std::set<std::string, std::less<>> kKnownFields{
    "model", "prompt", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p",
    "seed",  "n",      "stop",     "stream",     "stream_options",        "min_tokens",  "ignore_eos"};

// Model output may hold invalid UTF-8 (random-weight models do): replaced, never a failure.
std::string dump(const json& j) { return json_text(j); }

template <typename T>
T number(const json& j, const char* key, T fallback, T low, T high) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number()) throw bad_request(std::string(key) + ": must be a number");
  const auto value = j[key].get<T>();
  if (value < low || value > high)
    throw bad_request(std::string(key) + ": " + json_text(j[key]) + " is outside " + std::to_string(low) + ".." +
                      std::to_string(high));
  return value;
}

json usage_json(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json envelope(const CompletionRequest& request, const CompletionIdentity& identity, bool chunk) {
  return {{"id", identity.id},
          {"object", request.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", identity.created},
          {"model", identity.model},
          {"system_fingerprint", "infermark-" + identity.variant}};
}

// The text a choice carries: "text" (completions), "delta" or "message" content (chat).
// A choice's text: "delta"/"message" content (chat) or "text"; empty when it carries none.
std::string text_of(const json& choice, bool chat) {
  const json* text = nullptr;
  if (chat) {
    for (const char* key : {"delta", "message"})
      if (choice.contains(key) && choice[key].is_object() && choice[key].contains("content")) text = &choice[key]["content"];
  } else if (choice.contains("text")) {
    text = &choice["text"];
  }
  return text && text->is_string() ? text->get<std::string>() : std::string();
}

std::optional<int> usage_count(const json& usage, const char* key) {
  if (usage.contains(key) && usage[key].is_number_integer()) return usage[key].get<int>();
  return std::nullopt;
}

}  // namespace

std::string_view finish_reason_name(FinishReason reason) { return reason == FinishReason::kStop ? "stop" : "length"; }

std::string completion_request_body(const CompletionRequest& request, bool ignore_eos, const json& extra) {
  json body{{"model", request.model},
            {"max_tokens", request.max_tokens},
            {"stream", request.stream},
            {"temperature", request.sampling.temperature}};
  if (request.seed_given) body["seed"] = request.sampling.seed;
  if (request.chat) {
    body["messages"] = json::array();
    for (const auto& m : request.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  } else {
    body["prompt"] = request.prompt;
  }
  if (request.include_usage) body["stream_options"] = {{"include_usage", true}};
  if (ignore_eos) body["ignore_eos"] = true;
  for (const auto& [key, value] : extra.items()) body[key] = value;
  return json_text(body);
}

AnswerPiece read_answer_piece(const json& j, bool chat) {
  AnswerPiece piece;
  if (j.contains("error") && !j["error"].is_null()) {
    piece.error = json_text(j);
    return piece;
  }
  if (j.contains("usage") && j["usage"].is_object()) {
    piece.completion_tokens = usage_count(j["usage"], "completion_tokens");
    piece.prompt_tokens = usage_count(j["usage"], "prompt_tokens");
  }
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) piece.text = text_of(j["choices"].front(), chat);
  piece.has_text = !piece.text.empty();
  return piece;
}

CompletionRequest parse_completion_request(std::string_view body, bool chat) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw bad_request("the request body is not a JSON object");
  CompletionRequest request;
  request.chat = chat;
  if (!j.contains("model") || !j["model"].is_string()) throw bad_request("model: missing or not a string");
  request.model = j["model"].get<std::string>();
  if (chat) {
    if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
      throw bad_request("messages: missing, empty or not an array");
    for (std::size_t i = 0; i < j["messages"].size(); ++i) {
      const auto& m = j["messages"][i];
      const auto field = "messages[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) throw bad_request(field + ".role: missing");
      std::string content;
      if (m.contains("content") && m["content"].is_string()) {
        content = m["content"].get<std::string>();
      } else if (m.contains("content") && m["content"].is_array()) {  // [{"type": "text", "text": ...}]
        for (const auto& part : m["content"])
          if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string())
            content += part["text"].get<std::string>();
          else
            throw bad_request(field + ".content: only text parts are supported");
      } else if (!(m.contains("content") && m["content"].is_null())) {
        throw bad_request(field + ".content: missing");
      }
      request.messages.push_back({m["role"].get<std::string>(), content});
    }
  } else {
    if (!j.contains("prompt")) throw bad_request("prompt: missing");
    if (j["prompt"].is_string()) {
      request.prompt = j["prompt"].get<std::string>();
    } else if (j["prompt"].is_array() && j["prompt"].size() == 1 && j["prompt"][0].is_string()) {
      request.prompt = j["prompt"][0].get<std::string>();
    } else {
      throw bad_request("prompt: must be a string (one prompt per request)");
    }
    if (request.prompt.empty()) throw bad_request("prompt: empty");
  }
  const char* length_key = chat && j.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  request.max_tokens = number<int>(j, length_key, 16, 1, 1 << 20);
  request.sampling.temperature = number<float>(j, "temperature", 1.0f, 0.0f, 2.0f);
  request.sampling.top_p = number<float>(j, "top_p", 1.0f, 0.0f, 1.0f);
  if (request.sampling.top_p <= 0) throw bad_request("top_p: must be above 0");
  if (j.contains("seed") && !j["seed"].is_null()) {
    if (!j["seed"].is_number_integer()) throw bad_request("seed: must be an integer");
    request.sampling.seed = static_cast<std::uint64_t>(j["seed"].get<std::int64_t>());
    request.seed_given = true;
  }
  if (j.contains("n") && !j["n"].is_null() && (!j["n"].is_number_integer() || j["n"].get<int>() != 1))
    throw bad_request("n: only 1 choice per request is supported");
  if (j.contains("stop") && !j["stop"].is_null()) {
    if (j["stop"].is_string()) {
      request.stop.push_back(j["stop"].get<std::string>());
    } else if (j["stop"].is_array() && j["stop"].size() <= 4) {
      for (const auto& s : j["stop"]) {
        if (!s.is_string()) throw bad_request("stop: every entry must be a string");
        request.stop.push_back(s.get<std::string>());
      }
    } else {
      throw bad_request("stop: a string or up to 4 strings");
    }
  }
  if (j.contains("stream") && !j["stream"].is_null()) {
    if (!j["stream"].is_boolean()) throw bad_request("stream: must be true or false");
    request.stream = j["stream"].get<bool>();
  }
  if (j.contains("stream_options") && j["stream_options"].is_object()) {
    const auto& options = j["stream_options"];
    request.include_usage =
        options.contains("include_usage") && options["include_usage"].is_boolean() && options["include_usage"].get<bool>();
  }
  request.sampling.min_tokens = number<int>(j, "min_tokens", 0, 0, request.max_tokens);
  if (j.contains("ignore_eos") && !j["ignore_eos"].is_null()) {
    if (!j["ignore_eos"].is_boolean()) throw bad_request("ignore_eos: must be true or false");
    if (j["ignore_eos"].get<bool>()) request.sampling.min_tokens = request.max_tokens;
  }
  for (const auto& [key, value] : j.items())
    if (!kKnownFields.count(key)) request.ignored_fields.push_back(key);
  return request;
}

std::string completion_body(const CompletionRequest& request, const CompletionIdentity& identity, const std::string& text,
                            FinishReason finish, int prompt_tokens, int completion_tokens) {
  auto body = envelope(request, identity, false);
  json choice{{"index", 0}, {"finish_reason", finish_reason_name(finish)}, {"logprobs", nullptr}};
  if (request.chat)
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  body["choices"] = json::array({choice});
  body["usage"] = usage_json(prompt_tokens, completion_tokens);
  return dump(body);
}

std::string stream_event(const CompletionRequest& request, const CompletionIdentity& identity, const std::string& text,
                         std::optional<FinishReason> finish, bool role_only) {
  auto body = envelope(request, identity, true);
  json choice{{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish ? json(finish_reason_name(*finish)) : json(nullptr)}};
  if (request.chat) {
    choice["delta"] = role_only ? json{{"role", "assistant"}, {"content", ""}}
                      : finish  ? json::object()
                                : json{{"content", text}};
  } else {
    choice["text"] = text;
  }
  body["choices"] = json::array({choice});
  if (request.include_usage) body["usage"] = nullptr;
  return "data: " + dump(body) + "\n\n";
}

std::string usage_event(const CompletionRequest& request, const CompletionIdentity& identity, int prompt_tokens,
                        int completion_tokens) {
  auto body = envelope(request, identity, true);
  body["choices"] = json::array();
  body["usage"] = usage_json(prompt_tokens, completion_tokens);
  return "data: " + dump(body) + "\n\n";
}

std::string stream_error_event(const std::string& message) {
  return "data: " + dump({{"error", {{"message", message}, {"type", "server_error"}, {"code", 500}}}}) + "\n\ndata: [DONE]\n\n";
}

std::string openai_error_body(int status, const std::string& message) {
  const char* type = status == 404   ? "not_found_error"
                     : status == 429 ? "rate_limit_error"
                     : status < 500  ? "invalid_request_error"
                                     : "server_error";
  return dump({{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}}}});
}

}  // namespace infermark::openai

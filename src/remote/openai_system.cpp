#include "remote/openai_system.hpp"

#include <fstream>
#include <memory>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "remote/sse_parser.hpp"

namespace infermark::remote {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

// Common short words: ordinary tokenizers give each about one token.
constexpr const char* kWords[] = {"the",  "of",    "and",   "to",    "in",   "is",    "it",   "that", "for",   "you",   "was",
                                  "with", "on",    "as",    "have",  "but",  "be",    "they", "at",   "one",   "this",  "from",
                                  "or",   "had",   "by",    "word",  "what", "all",   "were", "we",   "when",  "your",  "can",
                                  "said", "there", "use",   "an",    "each", "which", "she",  "do",   "how",   "their", "if",
                                  "will", "up",    "other", "about", "out",  "many",  "then", "them", "these", "so",    "some",
                                  "her",  "would", "make",  "like",  "him",  "into",  "time", "has",  "look"};

std::string_view content_of(const json& choice, OpenAiEndpoint endpoint) {
  const json* text = nullptr;
  if (endpoint == OpenAiEndpoint::kChat) {
    for (const char* key : {"delta", "message"})
      if (choice.contains(key) && choice[key].is_object() && choice[key].contains("content")) text = &choice[key]["content"];
  } else if (choice.contains("text")) {
    text = &choice["text"];
  }
  return text && text->is_string() ? std::string_view(text->get_ref<const std::string&>()) : std::string_view();
}

// One request's stream: what its events said so far.
struct StreamState {
  loadgen::Completion* completion = nullptr;
  SseParser parser;
  std::string error;  // an error event, or an event that is not JSON
  bool usage = false;

  void event(std::string_view data, OpenAiEndpoint endpoint) {
    if (data == "[DONE]" || !error.empty()) return;
    const auto j = json::parse(data, nullptr, false);
    if (!j.is_object()) {
      error = "an event is not JSON: " + std::string(data.substr(0, 200));
      return;
    }
    read(j, endpoint, mono_now_ns());
  }

  void read(const json& j, OpenAiEndpoint endpoint, std::int64_t now_ns) {
    if (j.contains("error") && !j["error"].is_null()) {
      error = server_message(json_text(j));  // the message, not the whole error object
      return;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      const auto& u = j["usage"];
      if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer()) {
        completion->output_tokens = u["completion_tokens"].get<int>();
        usage = true;
      }
      if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer())
        completion->prompt_tokens = u["prompt_tokens"].get<int>();
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() &&
        !content_of(j["choices"].front(), endpoint).empty())
      completion->token_ns.push_back(now_ns);
  }
};

}  // namespace

std::string_view name_of(OpenAiEndpoint endpoint) { return endpoint == OpenAiEndpoint::kChat ? "chat" : "completions"; }

std::vector<PromptSample> synthetic_prompts(const loadgen::LengthDistribution& prompt_words,
                                            const loadgen::LengthDistribution& output_tokens, std::uint64_t seed,
                                            std::uint32_t count) {
  SeededRandom random(seed);
  std::vector<PromptSample> prompts;
  constexpr int kLongest = 1 << 16;
  for (std::uint32_t i = 0; i < count; ++i) {
    PromptSample sample;
    const int words = prompt_words.draw(random, kLongest);
    for (int w = 0; w < words; ++w) {
      if (w > 0) sample.text += ' ';
      sample.text += kWords[random.next() % std::size(kWords)];
    }
    sample.max_tokens = output_tokens.draw(random, kLongest);
    prompts.push_back(std::move(sample));
  }
  return prompts;
}

std::vector<PromptSample> prompts_from_jsonl(const std::filesystem::path& file, const loadgen::LengthDistribution& output_tokens,
                                             std::uint64_t seed) {
  std::ifstream in(file);
  if (!in) throw Error("--prompts: cannot read '" + file.string() + "'");
  SeededRandom random(seed);
  std::vector<PromptSample> prompts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto where = file.string() + ":" + std::to_string(number);
    const auto j = json::parse(line, nullptr, false);
    if (!j.is_object()) throw Error(where + ": not a JSON object");
    PromptSample sample;
    if (j.contains("prompt") && j["prompt"].is_string()) {
      sample.text = j["prompt"].get<std::string>();
    } else if (j.contains("text") && j["text"].is_string()) {  // aiperf's and genai-perf's single_turn files
      sample.text = j["text"].get<std::string>();
    } else if (j.contains("messages") && j["messages"].is_array()) {
      for (const auto& m : j["messages"])
        if (m.is_object() && m.value("role", "") == "user" && m.contains("content") && m["content"].is_string())
          sample.text = m["content"].get<std::string>();
    } else if (j.contains("conversations") && j["conversations"].is_array()) {
      for (const auto& turn : j["conversations"])
        if (turn.is_object() && turn.value("from", "") == "human" && turn.contains("value") && turn["value"].is_string()) {
          sample.text = turn["value"].get<std::string>();
          break;
        }
    }
    if (sample.text.empty())
      throw Error(where +
                  ": no prompt: give \"prompt\", \"text\", \"messages\" with a user message, or ShareGPT \"conversations\"");
    sample.max_tokens = output_tokens.draw(random, 1 << 16);
    prompts.push_back(std::move(sample));
  }
  if (prompts.empty()) throw Error("--prompts: '" + file.string() + "' holds no prompts");
  return prompts;
}

OpenAiSystem::OpenAiSystem(net::HttpClient& client, OpenAiSettings settings, std::vector<PromptSample> prompts, int lanes,
                           RemoteErrors& errors)
    : client_(client),
      settings_(std::move(settings)),
      target_(settings_.endpoint == OpenAiEndpoint::kChat ? "/v1/chat/completions" : "/v1/completions"),
      library_(static_cast<std::uint32_t>(prompts.size())),
      lanes_(lanes),
      errors_(errors) {
  for (const auto& prompt : prompts) {
    json body{{"model", settings_.model},
              {"max_tokens", prompt.max_tokens},
              {"stream", settings_.stream},
              {"temperature", 0},
              {"seed", settings_.seed}};
    if (settings_.endpoint == OpenAiEndpoint::kChat)
      body["messages"] = json::array({{{"role", "user"}, {"content", prompt.text}}});
    else
      body["prompt"] = prompt.text;
    if (settings_.stream) body["stream_options"] = {{"include_usage", true}};
    if (settings_.ignore_eos) body["ignore_eos"] = true;
    for (const auto& [key, value] : settings_.extra.items()) body[key] = value;
    bodies_.push_back(json_text(body));
  }
}

void OpenAiSystem::start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) {
  auto state = std::make_shared<StreamState>();
  state->completion = &completion;
  net::ClientRequest request{http::verb::post, target_, bodies_[query.sample], {{"Content-Type", "application/json"}}};
  const auto endpoint = settings_.endpoint;
  net::HttpClient::Chunk on_chunk;
  if (settings_.stream)
    on_chunk = [state, endpoint](std::string_view bytes) {
      state->parser.feed(bytes, [&](std::string_view data) { state->event(data, endpoint); });
    };
  client_.send(
      std::move(request),
      [this, state, endpoint, done = std::move(done)](net::ClientResponse response) {
        if (!errors_.check(response)) return done(false);
        if (settings_.stream) {
          state->parser.finish([&](std::string_view data) { state->event(data, endpoint); });
        } else {
          const auto j = json::parse(response.body, nullptr, false);
          if (!j.is_object())
            state->error = "the answer is not JSON: " + response.body.substr(0, 200);
          else
            state->read(j, endpoint, mono_now_ns());
        }
        if (state->error.empty() && state->completion->token_ns.empty()) state->error = "no output text in the answer";
        if (!state->error.empty()) {
          errors_.count_stream_error(state->error);
          return done(false);
        }
        (state->usage ? by_usage_ : by_pieces_) += 1;
        done(true);
      },
      std::move(on_chunk));
}

void OpenAiSystem::issue(int, const loadgen::Query& query, loadgen::Completion& completion) {
  loadgen::start_and_wait(*this, query, completion);
}

}  // namespace infermark::remote

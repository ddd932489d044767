#include "remote/openai_system.hpp"

#include <algorithm>
#include <fstream>
#include <memory>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/named_enum.hpp"
#include "openai/openai_protocol.hpp"
#include "remote/sse_parser.hpp"

namespace infermark::remote {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

constexpr NamedValue<OpenAiEndpoint> kEndpoints[] = {{OpenAiEndpoint::kChat, "chat"},
                                                     {OpenAiEndpoint::kCompletions, "completions"}};

// One request's stream: what its events said so far.
struct StreamState {
  loadgen::Completion* completion = nullptr;
  SseParser parser;
  std::string error;  // an error event, or an event that is not JSON
  bool usage = false;
  bool keep_text = false;  // only a client-side tokenizer reads the answer's text
  std::string text;        // the answer so far, when kept

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
    const auto piece = openai::read_answer_piece(j, endpoint == OpenAiEndpoint::kChat);
    if (piece.error) {
      error = server_message(*piece.error);  // the message, not the whole error object
      return;
    }
    if (piece.completion_tokens) {
      completion->output_tokens = *piece.completion_tokens;
      usage = true;
    }
    if (piece.prompt_tokens) completion->prompt_tokens = *piece.prompt_tokens;
    if (piece.has_text) {
      completion->token_ns.push_back(now_ns);
      if (keep_text) text += piece.text;
    }
  }
};

}  // namespace

std::string_view name_of(OpenAiEndpoint endpoint) { return name_in(kEndpoints, endpoint); }

std::vector<std::pair<std::string, OpenAiEndpoint>> endpoint_names() { return names_in(kEndpoints); }

namespace {

int turns_in(const std::vector<PromptSample>& prompts) {
  std::uint32_t turns = 0;
  for (const auto& prompt : prompts) turns = std::max(turns, prompt.turn + 1);
  return static_cast<int>(turns);
}

int prefix_groups_in(const std::vector<PromptSample>& prompts) {
  std::uint32_t groups = 0;
  for (const auto& prompt : prompts)
    if (prompt.prefix_group) groups = std::max(groups, *prompt.prefix_group + 1);
  return static_cast<int>(groups);
}

}  // namespace

void add_shared_prefixes(std::vector<PromptSample>& prompts, const loadgen::SharedPrefix& shared, std::uint64_t seed,
                         const PromptWords& words) {
  if (!shared.enabled()) return;
  SeededRandom random(loadgen::prefix_stream_seed(seed));
  std::vector<std::string> prefixes;
  for (int g = 0; g < shared.groups; ++g) prefixes.push_back(words.take(shared.tokens, random));
  for (auto& prompt : prompts) {
    prompt.prefix_group = static_cast<std::uint32_t>(random.next() % prefixes.size());
    prompt.prefix = prefixes[*prompt.prefix_group];
  }
}

std::vector<PromptSample> synthetic_prompts(const loadgen::LengthDistribution& prompt_words,
                                            const loadgen::LengthDistribution& output_tokens, std::uint64_t seed,
                                            std::uint32_t count, const PromptWords& words) {
  SeededRandom random(seed);
  std::vector<PromptSample> prompts;
  constexpr int kLongest = 1 << 16;
  for (std::uint32_t i = 0; i < count; ++i) {
    PromptSample sample;
    sample.text = words.take(prompt_words.draw(random, kLongest), random);
    sample.max_tokens = output_tokens.draw(random, kLongest);
    prompts.push_back(std::move(sample));
  }
  return prompts;
}

std::vector<PromptSample> prompts_from_trace(const loadgen::Trace& trace, std::uint64_t seed, const PromptWords& words) {
  std::vector<PromptSample> prompts;
  prompts.reserve(trace.requests.size());
  const auto first_blocks = loadgen::first_block_groups(trace);
  for (std::size_t k = 0; k < trace.requests.size(); ++k) {
    const auto& request = trace.requests[k];
    PromptSample sample;
    sample.prefix_group = first_blocks.of_request[k];  // warm or cold by its first block (the words are in `text`)
    sample.max_tokens = request.output_tokens;
    int taken = 0;
    auto add = [&](int count, SeededRandom& random) {
      count = std::min(count, request.input_tokens - taken);
      if (count <= 0) return;
      sample.text += (taken > 0 ? " " : "") + words.take(count, random);
      taken += count;
    };
    for (const auto block : request.blocks) {
      SeededRandom block_random(loadgen::block_stream_seed(seed, block));
      add(trace.block_tokens, block_random);
    }
    SeededRandom own_random(loadgen::request_stream_seed(seed, k));
    add(request.input_tokens - taken, own_random);
    prompts.push_back(std::move(sample));
  }
  return prompts;
}

std::vector<PromptSample> conversation_prompts(const loadgen::LengthDistribution& message_words,
                                               const loadgen::LengthDistribution& output_tokens,
                                               const loadgen::Conversation& conversation, std::uint64_t seed,
                                               const PromptWords& words) {
  SeededRandom random(seed);
  std::vector<PromptSample> prompts;
  constexpr int kLongest = 1 << 16;
  for (std::uint32_t c = 0; c < loadgen::conversations_in_library(conversation.turns); ++c) {
    std::vector<std::string> history;
    for (int t = 0; t < conversation.turns; ++t) {
      PromptSample sample;
      sample.text = words.take(message_words.draw(random, kLongest), random);
      sample.max_tokens = output_tokens.draw(random, kLongest);
      sample.history = history;
      sample.turn = static_cast<std::uint32_t>(t);
      history.push_back(sample.text);
      history.push_back(words.take(sample.max_tokens, random));
      prompts.push_back(std::move(sample));
    }
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
      prefixes_(prefix_groups_in(prompts)),
      library_(static_cast<std::uint32_t>(prompts.size()), loadgen::TurnGroups{turns_in(prompts)}),
      lanes_(lanes),
      errors_(errors) {
  for (const auto& prompt : prompts) {
    openai::CompletionRequest request;  // greedy and seeded: the same prompt gives the same work every run
    request.chat = settings_.endpoint == OpenAiEndpoint::kChat;
    request.model = settings_.model;
    if (request.chat) {
      if (!prompt.prefix.empty()) request.messages.push_back({"system", prompt.prefix});
      for (std::size_t h = 0; h < prompt.history.size(); ++h)
        request.messages.push_back({h % 2 ? "assistant" : "user", prompt.history[h]});
      request.messages.push_back({"user", prompt.text});
    } else {
      if (!prompt.prefix.empty()) request.prompt += prompt.prefix + "\n\n";
      for (const auto& turn : prompt.history) request.prompt += turn + "\n\n";
      request.prompt += prompt.text;
    }
    prefix_groups_.push_back(prompt.prefix_group);
    request.max_tokens = prompt.max_tokens;
    request.sampling.temperature = 0;
    request.sampling.seed = settings_.seed;
    request.seed_given = true;
    request.stream = settings_.stream;
    request.include_usage = settings_.stream;  // the token count, from the server's own usage
    bodies_.push_back(openai::completion_request_body(request, settings_.ignore_eos, settings_.extra));
  }
}

void OpenAiSystem::start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) {
  auto state = std::make_shared<StreamState>();
  state->completion = &completion;
  state->keep_text = settings_.tokenizer != nullptr;
  completion.prefix = prefixes_.on_issue(prefix_groups_[query.sample]);
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
        count_output_tokens(*state->completion, state->usage, state->text);
        done(true);
      },
      std::move(on_chunk));
}

result::TokenCounts OpenAiSystem::token_counts() const {
  result::TokenCounts counts{by_usage_, by_pieces_};
  if (settings_.tokenizer) {
    counts.tokenizer = settings_.tokenizer->describe();
    counts.from_tokenizer = by_tokenizer_;
    counts.tokenizer_tokens = tokenizer_tokens_;
    counts.server_usage_tokens = server_usage_tokens_;
  }
  return counts;
}

void OpenAiSystem::count_output_tokens(loadgen::Completion& completion, bool usage, const std::string& text) {
  if (!settings_.tokenizer) {
    (usage ? by_usage_ : by_pieces_) += 1;
    return;
  }
  const int counted = settings_.tokenizer->count(text);
  if (usage) {
    server_usage_tokens_ += static_cast<std::uint64_t>(std::max(completion.output_tokens, 0));
    tokenizer_tokens_ += static_cast<std::uint64_t>(counted);
  }
  completion.output_tokens = counted;
  by_tokenizer_ += 1;
}

void OpenAiSystem::issue(int, const loadgen::Query& query, loadgen::Completion& completion) {
  loadgen::start_and_wait(*this, query, completion);
}

}  // namespace infermark::remote

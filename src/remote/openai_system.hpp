// An OpenAI-compatible LLM server (llama-server, vLLM, TGI, infermark serve) as a system under
// test: /v1/chat/completions or /v1/completions, streamed (SSE) or not. Each streamed piece is
// stamped as it arrives, so TTFT, inter-token latency and TPOT come out of the same recorder as
// in-process LLM runs; token counts come from the served model's own tokenizer over the answer's
// text when `load` is given one (--tokenizer), else from the server's `usage` where it sends one,
// else from the counted pieces, and the result says which.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/model_tokenizer.hpp"
#include "loadgen/conversation.hpp"
#include "loadgen/generation.hpp"
#include "loadgen/system_under_test.hpp"
#include "loadgen/trace.hpp"
#include "net/http_client.hpp"
#include "remote/prompt_words.hpp"
#include "remote/remote_errors.hpp"
#include "result/result_sections.hpp"

namespace infermark::remote {

enum class OpenAiEndpoint { kChat, kCompletions };
std::string_view name_of(OpenAiEndpoint endpoint);  // "chat", "completions"
std::vector<std::pair<std::string, OpenAiEndpoint>> endpoint_names();

struct PromptSample {
  std::string text;  // the user's message (chat) or the prompt (completions)
  int max_tokens = 32;
  // Shared-prefix workloads: the group's prefix, sent as the system message (chat) or before the
  // text (completions), so the rendered prompts of one group start alike.
  std::string prefix;
  std::optional<std::uint32_t> prefix_group;
  // Conversations: the earlier turns, a user message then its answer, alternating, sent before
  // `text` (chat messages, or one prompt for completions); `turn` counts from 0.
  std::vector<std::string> history;
  std::uint32_t turn = 0;
};

// `count` prompts of drawn lengths made of common English words (about one token each for
// ordinary tokenizers; the server's usage gives the real count), seeded.
std::vector<PromptSample> synthetic_prompts(const loadgen::LengthDistribution& prompt_words,
                                            const loadgen::LengthDistribution& output_tokens, std::uint64_t seed,
                                            std::uint32_t count = 256, const PromptWords& words = PromptWords::common());
// A replayed trace's requests, in order: the k-th prompt has the k-th request's input length in
// common English words (a recorded block's words the same wherever the block recurs, so prompts
// sharing blocks start alike) and asks for its output length.
std::vector<PromptSample> prompts_from_trace(const loadgen::Trace& trace, std::uint64_t seed,
                                             const PromptWords& words = PromptWords::common());
// Multi-turn conversations (conversations_in_library of them, in order, turn by turn): turn t's
// message of drawn length after the earlier turns' messages and answers (common English words;
// an answer has its turn's output length, the same for every server, not what the server said).
std::vector<PromptSample> conversation_prompts(const loadgen::LengthDistribution& message_words,
                                               const loadgen::LengthDistribution& output_tokens,
                                               const loadgen::Conversation& conversation, std::uint64_t seed,
                                               const PromptWords& words = PromptWords::common());
// A JSONL file: each line {"prompt": "..."}, {"messages": [{"role", "content"}, ...]} (the last
// user message) or a ShareGPT record {"conversations": [{"from": "human", "value": "..."}, ...]}
// (the first human turn). Throws infermark::Error naming the file and line.
std::vector<PromptSample> prompts_from_jsonl(const std::filesystem::path& file, const loadgen::LengthDistribution& output_tokens,
                                             std::uint64_t seed);

// Gives each prompt one of `shared.groups` prefixes of `shared.tokens` common English words (none
// when not enabled), groups drawn from the seed.
void add_shared_prefixes(std::vector<PromptSample>& prompts, const loadgen::SharedPrefix& shared, std::uint64_t seed,
                         const PromptWords& words = PromptWords::common());

struct OpenAiSettings {
  std::string model;
  OpenAiEndpoint endpoint = OpenAiEndpoint::kChat;
  bool stream = true;
  bool ignore_eos = true;  // generate max_tokens every time, where the server supports it
  std::uint64_t seed = 42;
  nlohmann::json extra = nlohmann::json::object();  // more request fields (e.g. a llama-server grammar)
  // --tokenizer: counts each answer's output tokens from its text instead (none: usage or pieces).
  const harness::ModelTokenizer* tokenizer = nullptr;
};

class OpenAiSystem final : public loadgen::SystemUnderTest {
 public:
  OpenAiSystem(net::HttpClient& client, OpenAiSettings settings, std::vector<PromptSample> prompts, int lanes,
               RemoteErrors& errors);

  int lanes() const override { return lanes_; }
  const loadgen::SampleLibrary& samples() const override { return library_; }
  bool asynchronous() const override { return true; }
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;
  void start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) override;

  // How many requests' output tokens came from the server's usage, from counted stream pieces or
  // from the tokenizer (with both totals where the server sent usage too), warm-up included.
  result::TokenCounts token_counts() const;

 private:
  net::HttpClient& client_;
  OpenAiSettings settings_;
  std::string target_;
  std::vector<std::string> bodies_;                          // one request body per prompt, built before anything is timed
  std::vector<std::optional<std::uint32_t>> prefix_groups_;  // per prompt
  loadgen::PrefixWarmthTracker prefixes_;
  loadgen::TurnLibrary library_;  // one sample per body; a conversation's by turn
  int lanes_;
  RemoteErrors& errors_;
  std::atomic<std::uint64_t> by_usage_{0}, by_pieces_{0}, by_tokenizer_{0}, tokenizer_tokens_{0}, server_usage_tokens_{0};

  void count_output_tokens(loadgen::Completion& completion, bool usage, const std::string& text);
};

}  // namespace infermark::remote

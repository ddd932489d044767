// The LLM counterpart of Session: a Generator holds one loaded language model and a pool of
// sequence slots decoded together in one batch (continuous batching, as serving engines do).
// The harness owns scheduling and timing; a Generator only prefills, decodes and samples.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace infermark {

using TokenId = std::int32_t;

// One token produced by a step: which sequence slot it belongs to and the token itself.
struct GeneratedToken {
  int slot = 0;
  TokenId token = 0;
};

// Per-request sampling for serving. The benchmark default is greedy (temperature 0).
struct Sampling {
  float temperature = 0;  // 0: greedy
  float top_p = 1;        // nucleus sampling: the smallest set of tokens whose probability reaches top_p
  std::uint64_t seed = 0;
  // End tokens are not chosen until this many tokens are out (OpenAI-style min_tokens; a request
  // with ignore_eos asks for all of max_tokens), as vLLM and llama-server do.
  int min_tokens = 0;
};

// What score_window() measured: the summed negative log-likelihood (natural log) of the scored tokens.
struct WindowScore {
  double negative_log_likelihood = 0;
  int tokens = 0;
};

// How a generator decodes its sequence slots, which results report beside the figures.
enum class GenerationBatching {
  kContinuous,       // one forward pass per step over every active slot; requests join and leave it
  kSequencesInTurn,  // one forward pass per active slot per step, run one after another
};

// The scenario's "batching" text for results and tables.
inline const char* describe(GenerationBatching batching) {
  return batching == GenerationBatching::kContinuous ? "continuous: requests join and leave one running batch"
                                                     : "none: each sequence is its own forward pass, the active ones run in turn";
}

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class Generator {
 public:
  virtual ~Generator() = default;
  // Tokens the model's context holds per sequence; a prompt plus its output must fit.
  virtual int context_length() const = 0;
  virtual int vocab_size() const = 0;
  // Sequence slots that can be decoded together in one batch.
  virtual int max_slots() const = 0;
  virtual GenerationBatching batching() const = 0;
  // Token ids that are safe for synthetic prompts (ordinary vocabulary pieces, no control tokens).
  virtual std::vector<TokenId> prompt_vocabulary() const = 0;
  // Queues `prompt` on a free `slot`; its prefill runs in the next step(). Throws infermark::Error
  // when the slot is busy or prompt + max_new_tokens exceeds the context.
  virtual void start(int slot, const std::vector<TokenId>& prompt, int max_new_tokens) = 0;
  // One forward pass over every active slot: pending prompts are prefilled (their first token is
  // sampled), decoding slots advance one token. Greedy sampling, end-of-sequence ignored, so
  // output lengths are what was asked. `on_token` runs once per token as soon as it is sampled.
  virtual void step(const std::function<void(const GeneratedToken&)>& on_token) = 0;
  // Frees the slot and its KV cache so a new request can take it.
  virtual void finish(int slot) = 0;
  virtual std::vector<EffectiveSetting> effective_settings() const = 0;
  // Prompt tokens whose prefill a prefix cache skipped since the generator was opened; 0 without one.
  virtual std::uint64_t prompt_tokens_reused() const { return 0; }

  // Serving text (`infermark serve`); generators that cannot keep these defaults, which say so.
  // Sampling for the request started on `slot` (call after start()).
  virtual void set_sampling(int /*slot*/, const Sampling& /*sampling*/) { throw Error("this generator has no sampling options"); }
  virtual std::vector<TokenId> tokenize(const std::string& /*text*/) const { throw Error("this generator cannot tokenize text"); }
  // The bytes of one token (possibly part of a UTF-8 character).
  virtual std::string token_piece(TokenId /*token*/) const { throw Error("this generator cannot detokenize"); }
  // End of generation (end-of-sequence, end-of-turn): serving stops there; benchmarks do not.
  virtual bool is_end_of_generation(TokenId /*token*/) const { return false; }
  // The conversation in the model's chat template (or a generic one), ending where the assistant answers.
  virtual std::string chat_prompt(const std::vector<ChatMessage>& /*messages*/) const {
    throw Error("this generator has no chat template");
  }

  // Perplexity: `window` decoded as one fresh sequence (no slot may be busy), its first token
  // replaced by the model's start token where its tokenizer adds one; scores window[i + 1] given
  // window[0..i] for every i from first_scored to window.size() - 2.
  virtual WindowScore score_window(const std::vector<TokenId>& /*window*/, std::size_t /*first_scored*/) {
    throw Error("this generator cannot score text (no perplexity)");
  }
};

}  // namespace infermark

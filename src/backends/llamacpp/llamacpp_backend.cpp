// llama.cpp backend: GGUF language models through llama.h, as a Generator whose sequence slots
// are llama.cpp sequence ids in one context, decoded together in each llama_decode call
// (continuous batching, as llama-server does). Built from the pinned source in third_party/.
#include <llama.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>

#include "backends/declared.hpp"
#include "backends/generator.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "llamacpp";

const std::vector<OptionDoc> kOptions{
    {"ctx", "N", "prompt + output of the workload", "context tokens per sequence slot (the harness sizes it from the workload)"},
    {"n_batch", "N", "2048", "most tokens one llama_decode call takes (prefill is chunked to fit, llama-bench's -b)"},
    {"n_ubatch", "N", "512", "physical micro-batch (llama-bench's -ub)"},
    {"flash_attn", "auto|on|off", "auto", "flash attention (llama-bench's -fa)"},
    {"kv_unified", "on|off", "off (on with prefix_cache)", "one KV buffer shared by all sequences instead of one per sequence"},
    {"prefix_cache", "on|off", "off",
     "keep each finished prompt's KV cells and start a new prompt from the longest prefix any slot holds (another "
     "slot's only with kv_unified)"},
    {"prefix_cache_entries", "N", "4",
     "prompts kept beyond the slots' own (extra sequences in the unified KV buffer, least recently used replaced)"}};

// How many leading tokens of `prompt` (at most `most`) `held` starts with.
std::size_t common_prefix(const std::vector<TokenId>& held, const std::vector<TokenId>& prompt, std::size_t most) {
  const auto limit = std::min({held.size(), prompt.size(), most});
  std::size_t n = 0;
  while (n < limit && held[n] == prompt[n]) ++n;
  return n;
}

// llama.cpp logs through one global callback: keep the last error lines so a failed load can say
// why, and what flash_attn=auto resolved to (only the log says), and keep the rest off the terminal.
class LogCapture {
 public:
  static LogCapture& instance() {
    static LogCapture capture;
    return capture;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    errors_.clear();
    flash_attention_.clear();
  }
  std::string errors() {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  // "enabled", "disabled" or "" (not resolved since clear()).
  std::string flash_attention() {
    std::lock_guard lock(mutex_);
    return flash_attention_;
  }

 private:
  LogCapture() {
    llama_log_set(
        [](ggml_log_level level, const char* text, void* self) {
          auto& capture = *static_cast<LogCapture*>(self);
          std::lock_guard lock(capture.mutex_);
          std::string line = text;
          if (line.find("Flash Attention enabled") != std::string::npos) capture.flash_attention_ = "enabled";
          if (line.find("Flash Attention not supported") != std::string::npos) capture.flash_attention_ = "disabled";
          if (level != GGML_LOG_LEVEL_ERROR && level != GGML_LOG_LEVEL_WARN) return;
          while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
          if (line.empty()) return;
          if (capture.errors_.size() > 2000) capture.errors_.erase(0, capture.errors_.size() - 1000);
          capture.errors_ += (capture.errors_.empty() ? "" : "; ") + line;
        },
        this);
  }
  std::mutex mutex_;
  std::string errors_;
  std::string flash_attention_;
};

// The GGUF magic is checked first so that a wrong file gets a plain answer, not a loader trace.
void check_gguf_file(const std::filesystem::path& model) {
  std::ifstream in(model, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (!in || std::memcmp(magic, "GGUF", 4) != 0) throw Error(model.string() + ": not a GGUF file (no GGUF magic at its start)");
}

// What flash attention ran as: on/off as set, or auto with what llama.cpp resolved it to.
std::string flash_attention_effective(llama_flash_attn_type type) {
  const std::string name = llama_flash_attn_type_name(type);
  const auto resolved = LogCapture::instance().flash_attention();
  return type == LLAMA_FLASH_ATTN_TYPE_AUTO && !resolved.empty() ? name + ": " + resolved : name;
}

std::string model_meta(const llama_model* model, const char* key) {
  char buffer[256] = {};
  return llama_model_meta_val_str(model, key, buffer, sizeof buffer) >= 0 ? buffer : "";
}

llama_flash_attn_type flash_attn_option(const std::string& value) {
  if (value == "auto") return LLAMA_FLASH_ATTN_TYPE_AUTO;
  if (value == "on") return LLAMA_FLASH_ATTN_TYPE_ENABLED;
  if (value == "off") return LLAMA_FLASH_ATTN_TYPE_DISABLED;
  throw Error(std::string(kName) + ": --opt flash_attn=" + value + ": expected auto, on or off");
}

struct SlotState {
  bool active = false;
  std::vector<TokenId> prompt;
  std::size_t prefilled = 0;  // prompt tokens already in the KV cache
  llama_pos n_past = 0;       // positions used in the KV cache
  TokenId last_token = 0;     // sampled, not yet fed back
  int generated = 0;
  int max_new_tokens = 0;
  Sampling sampling;
  std::uint64_t draws = 0;  // random draws so far (a counter-based stream from the seed)
};

// Temperature and nucleus sampling over `logits`; greedy at temperature 0. Seeded, so a request
// with a seed gets the same text every time.
TokenId sample_token(const float* logits, int vocabulary, SlotState& slot) {
  if (slot.sampling.temperature <= 0) return static_cast<TokenId>(std::max_element(logits, logits + vocabulary) - logits);
  std::vector<std::pair<float, TokenId>> candidates(static_cast<std::size_t>(vocabulary));
  const float top = *std::max_element(logits, logits + vocabulary);
  double total = 0;
  for (TokenId t = 0; t < vocabulary; ++t) {
    const auto p = static_cast<float>(std::exp((logits[t] - top) / slot.sampling.temperature));
    candidates[static_cast<std::size_t>(t)] = {p, t};
    total += p;
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  double kept = 0;
  std::size_t count = 0;
  while (count < candidates.size() && (count == 0 || kept / total < slot.sampling.top_p)) kept += candidates[count++].first;
  const double draw = SeededRandom(slot.sampling.seed + 0x9E3779B97F4A7C15ull * ++slot.draws).uniform() * kept;
  double running = 0;
  for (std::size_t i = 0; i < count; ++i)
    if ((running += candidates[i].first) >= draw) return candidates[i].second;
  return candidates[count - 1].second;
}

class LlamaCppGenerator final : public Generator {
 public:
  LlamaCppGenerator(const std::filesystem::path& path, const SessionOptions& options) {
    check_option_keys(kName, options.extras, kOptions);
    check_gguf_file(path);
    LogCapture::instance().clear();
    auto model_params = llama_model_default_params();
    model_params.n_gpu_layers = 0;  // CPU: the device this backend reports
    model_ = llama_model_load_from_file(path.c_str(), model_params);
    if (!model_) {
      const auto why = LogCapture::instance().errors();
      throw Error("llama.cpp cannot load " + path.string() + ": " + (why.empty() ? "unknown reason" : why));
    }
    vocab_ = llama_model_get_vocab(model_);
    for (TokenId t = 0; t < llama_vocab_n_tokens(vocab_); ++t)
      if (llama_vocab_is_eog(vocab_, t)) end_tokens_.push_back(t);
    architecture_ = model_meta(model_, "general.architecture");

    slots_.resize(static_cast<std::size_t>(std::max(1, options.expected_concurrency)));
    auto params = llama_context_default_params();
    const int ctx_train = llama_model_n_ctx_train(model_);
    const auto ctx_option = option_or(options.extras, "ctx", "");
    const int per_sequence = ctx_option.empty() ? ctx_train : parse_count_option(kName, "ctx", ctx_option);
    if (per_sequence < 1) throw Error(std::string(kName) + ": --opt ctx must be at least 1");
    prefix_cache_ = parse_bool_option(kName, "prefix_cache", option_or(options.extras, "prefix_cache", "off"));
    // A prefix held by another slot is copied by tagging its cells, which llama.cpp does only
    // within one KV buffer: so the prefix cache asks for the unified one unless told otherwise.
    params.kv_unified =
        parse_bool_option(kName, "kv_unified", option_or(options.extras, "kv_unified", prefix_cache_ ? "on" : "off"));
    kv_unified_ = params.kv_unified;
    // Stored prompts are sequences of their own beside the slots, each up to a slot's context.
    if (prefix_cache_ && kv_unified_)
      store_entries_ = static_cast<std::size_t>(
          parse_count_option(kName, "prefix_cache_entries", option_or(options.extras, "prefix_cache_entries", "4")));
    params.n_seq_max = static_cast<uint32_t>(slots_.size() + store_entries_);
    cached_.resize(params.n_seq_max);
    last_used_.resize(params.n_seq_max);
    params.n_ctx = static_cast<uint32_t>(per_sequence) * params.n_seq_max;
    params.n_batch = static_cast<uint32_t>(parse_count_option(kName, "n_batch", option_or(options.extras, "n_batch", "2048")));
    params.n_ubatch = static_cast<uint32_t>(parse_count_option(kName, "n_ubatch", option_or(options.extras, "n_ubatch", "512")));
    params.flash_attn_type = flash_attn_option(option_or(options.extras, "flash_attn", "auto"));
    if (options.intra_op_threads > 0) params.n_threads = params.n_threads_batch = options.intra_op_threads;
    params.no_perf = true;
    context_ = llama_init_from_model(model_, params);
    if (!context_) {
      const auto why = LogCapture::instance().errors();
      llama_model_free(model_);
      throw Error("llama.cpp cannot create a context for " + path.string() + ": " + (why.empty() ? "unknown reason" : why));
    }
    batch_capacity_ = static_cast<int>(llama_n_batch(context_));
    batch_ = llama_batch_init(batch_capacity_, 0, 1);
    record_settings(options, params, per_sequence, ctx_train);
  }

  ~LlamaCppGenerator() override {
    llama_batch_free(batch_);
    llama_free(context_);
    llama_model_free(model_);
  }

  // Per sequence: with one KV buffer llama.cpp reports the whole buffer, which the sequences share.
  int context_length() const override {
    return kv_unified_ ? static_cast<int>(llama_n_ctx(context_) / llama_n_seq_max(context_))
                       : static_cast<int>(llama_n_ctx_seq(context_));
  }
  int vocab_size() const override { return llama_vocab_n_tokens(vocab_); }
  int max_slots() const override { return static_cast<int>(slots_.size()); }
  GenerationBatching batching() const override { return GenerationBatching::kContinuous; }

  std::vector<TokenId> prompt_vocabulary() const override {
    std::vector<TokenId> tokens;
    for (TokenId t = 0; t < vocab_size(); ++t)
      if ((llama_vocab_get_attr(vocab_, t) & LLAMA_TOKEN_ATTR_NORMAL) && !llama_vocab_is_eog(vocab_, t)) tokens.push_back(t);
    return tokens;
  }

  void start(int slot, const std::vector<TokenId>& prompt, int max_new_tokens) override {
    auto& s = slot_at(slot);
    if (s.active) throw Error("llama.cpp: sequence slot " + std::to_string(slot) + " is busy");
    if (prompt.empty() || max_new_tokens < 1) throw Error("llama.cpp: a request needs at least one prompt and one output token");
    if (static_cast<int>(prompt.size()) + max_new_tokens > context_length())
      throw Error("llama.cpp: prompt of " + std::to_string(prompt.size()) + " tokens + " + std::to_string(max_new_tokens) +
                  " output tokens exceeds the context of " + std::to_string(context_length()) + " tokens per sequence");
    const auto reused = prefix_cache_ ? reuse_prefix(slot, prompt) : 0;
    s = SlotState{true, prompt, reused, static_cast<llama_pos>(reused), 0, 0, max_new_tokens, {}, 0};
  }

  void set_sampling(int slot, const Sampling& sampling) override {
    if (sampling.temperature < 0 || sampling.top_p <= 0 || sampling.top_p > 1)
      throw Error("llama.cpp: temperature must be >= 0 and top_p in (0, 1]");
    slot_at(slot).sampling = sampling;
  }

  std::vector<TokenId> tokenize(const std::string& text) const override {
    std::vector<TokenId> tokens(text.size() + 8);
    auto n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                            static_cast<int32_t>(tokens.size()), true, true);
    if (n < 0) {
      tokens.resize(static_cast<std::size_t>(-n));
      n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                         static_cast<int32_t>(tokens.size()), true, true);
    }
    if (n < 0) throw Error("llama.cpp: cannot tokenize the prompt");
    tokens.resize(static_cast<std::size_t>(n));
    return tokens;
  }

  std::string token_piece(TokenId token) const override {
    char buffer[256];
    const auto n = llama_token_to_piece(vocab_, token, buffer, sizeof buffer, 0, false);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
  }

  bool is_end_of_generation(TokenId token) const override { return llama_vocab_is_eog(vocab_, token); }

  std::string chat_prompt(const std::vector<ChatMessage>& messages) const override {
    // The model's own template when llama.cpp knows it; ChatML otherwise (test models carry none).
    const char* model_template = llama_model_chat_template(model_, nullptr);
    std::vector<llama_chat_message> chat;
    std::size_t characters = 0;
    for (const auto& m : messages) {
      chat.push_back({m.role.c_str(), m.content.c_str()});
      characters += m.role.size() + m.content.size();
    }
    for (const char* tmpl : {model_template, "chatml"}) {
      if (!tmpl) continue;
      std::string buffer(2 * characters + 256, '\0');
      auto n =
          llama_chat_apply_template(tmpl, chat.data(), chat.size(), true, buffer.data(), static_cast<int32_t>(buffer.size()));
      if (n > static_cast<int32_t>(buffer.size())) {
        buffer.resize(static_cast<std::size_t>(n));
        n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), true, buffer.data(), static_cast<int32_t>(buffer.size()));
      }
      if (n >= 0) return buffer.substr(0, static_cast<std::size_t>(n));
    }
    throw Error("llama.cpp: cannot format the conversation with the model's chat template");
  }

  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    // Decoding slots first, one token each; prefill fills what is left of the batch, chunked.
    batch_.n_tokens = 0;
    std::vector<std::pair<int, int>> sampled;  // (slot, batch index of its logits)
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      if (!s.active || s.prefilled < s.prompt.size() || s.generated >= s.max_new_tokens) continue;
      sampled.emplace_back(static_cast<int>(i), batch_.n_tokens);
      add_token(s.last_token, s.n_past++, static_cast<int>(i), true);
    }
    for (std::size_t i = 0; i < slots_.size() && batch_.n_tokens < batch_capacity_; ++i) {
      auto& s = slots_[i];
      if (!s.active || s.prefilled == s.prompt.size()) continue;
      const auto room = static_cast<std::size_t>(batch_capacity_ - batch_.n_tokens);
      const auto chunk = std::min(room, s.prompt.size() - s.prefilled);
      for (std::size_t k = 0; k < chunk; ++k) {
        const bool last_of_prompt = s.prefilled + 1 == s.prompt.size();
        if (last_of_prompt) sampled.emplace_back(static_cast<int>(i), batch_.n_tokens);
        add_token(s.prompt[s.prefilled++], s.n_past++, static_cast<int>(i), last_of_prompt);
      }
    }
    if (batch_.n_tokens == 0) return;
    int rc = llama_decode(context_, batch_);
    // A full cache gives back what idle slots kept for later prompts before it fails a request
    // (a failed decode leaves the cache as it was, so the same batch can be tried again).
    if (rc == 1 && drop_idle_prefixes()) rc = llama_decode(context_, batch_);
    if (rc == 1)
      throw Error("llama.cpp: no room in the KV cache for this batch (context " + std::to_string(context_length()) +
                  " per sequence)");
    if (rc != 0)
      throw Error("llama.cpp: llama_decode failed with code " + std::to_string(rc) + ": " + LogCapture::instance().errors());
    const int vocabulary = vocab_size();
    for (const auto& [slot, index] : sampled) {
      float* logits = llama_get_logits_ith(context_, index);
      auto& s = slots_[static_cast<std::size_t>(slot)];
      if (s.generated < s.sampling.min_tokens)
        for (const auto t : end_tokens_) logits[t] = -std::numeric_limits<float>::infinity();
      const auto token = sample_token(logits, vocabulary, s);
      s.last_token = token;
      ++s.generated;
      on_token({slot, token});
    }
  }

  void finish(int slot) override {
    auto& s = slot_at(slot);
    auto* memory = llama_get_memory(context_);
    auto& kept = cached_[static_cast<std::size_t>(slot)];
    kept.clear();
    // With the prefix cache the prompt's cells stay (the generated ones go); otherwise all go.
    const auto prompt_held = std::min(s.prefilled, positions_held(static_cast<std::size_t>(slot)));
    if (prefix_cache_ && llama_memory_seq_rm(memory, slot, static_cast<llama_pos>(prompt_held), -1)) {
      kept.assign(s.prompt.begin(), s.prompt.begin() + static_cast<std::ptrdiff_t>(prompt_held));
      store_prefix(slot);
    } else {
      llama_memory_seq_rm(memory, slot, -1, -1);
    }
    s = SlotState{};
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }
  std::uint64_t prompt_tokens_reused() const override { return prompt_tokens_reused_; }

  // As llama-perplexity evaluates a chunk: one batch, the start token first where the model adds
  // one, then log-softmax over the vocabulary at each scored position.
  WindowScore score_window(const std::vector<TokenId>& window, std::size_t first_scored) override {
    if (first_scored + 1 >= window.size())
      throw Error("llama.cpp: a window of " + std::to_string(window.size()) + " tokens scores nothing from position " +
                  std::to_string(first_scored));
    if (static_cast<int>(window.size()) > std::min(context_length(), batch_capacity_))
      throw Error("llama.cpp: a window of " + std::to_string(window.size()) + " tokens exceeds the context (" +
                  std::to_string(context_length()) + ") or n_batch (" + std::to_string(batch_capacity_) + ")");
    for (const auto& s : slots_)
      if (s.active) throw Error("llama.cpp: cannot score text while a sequence slot is busy");
    auto* memory = llama_get_memory(context_);
    llama_memory_clear(memory, true);
    for (auto& kept : cached_) kept.clear();
    batch_.n_tokens = 0;
    const bool add_bos = llama_vocab_get_add_bos(vocab_);
    for (std::size_t i = 0; i < window.size(); ++i)
      add_token(i == 0 && add_bos ? llama_vocab_bos(vocab_) : window[i], static_cast<llama_pos>(i), 0,
                i >= first_scored && i + 1 < window.size());
    const int rc = llama_decode(context_, batch_);
    if (rc != 0)
      throw Error("llama.cpp: llama_decode of a scored window failed with code " + std::to_string(rc) + ": " +
                  LogCapture::instance().errors());
    const int vocabulary = vocab_size();
    WindowScore score;
    for (std::size_t i = first_scored; i + 1 < window.size(); ++i) {
      const float* logits = llama_get_logits_ith(context_, static_cast<int32_t>(i));
      const float top = *std::max_element(logits, logits + vocabulary);
      double total = 0;
      for (int t = 0; t < vocabulary; ++t) total += std::exp(static_cast<double>(logits[t]) - top);
      score.negative_log_likelihood += std::log(total) + top - logits[window[i + 1]];
      ++score.tokens;
    }
    llama_memory_clear(memory, true);
    return score;
  }

 private:
  // Points the slot's sequence at the longest prefix of `prompt` that any slot's cells hold (its
  // own cache, or with one KV buffer another slot's, idle or still prefilling) and returns its
  // length: the tokens prefill skips. The prompt's last token is always decoded again, for the
  // logits of the first output token.
  std::size_t reuse_prefix(int slot, const std::vector<TokenId>& prompt) {
    auto* memory = llama_get_memory(context_);
    const auto own = static_cast<std::size_t>(slot);
    const auto most = prompt.size() - 1;
    std::size_t best = common_prefix(cached_[own], prompt, most);
    int source = slot;
    for (std::size_t j = 0; unified_kv() && j < cached_.size(); ++j) {  // the other slots, then the store
      if (j == own) continue;
      const bool running = j < slots_.size() && slots_[j].active;
      const auto held = running ? std::min(common_prefix(slots_[j].prompt, prompt, most), positions_held(j))
                                : common_prefix(cached_[j], prompt, most);
      if (held > best) best = held, source = static_cast<int>(j);
    }
    if (static_cast<std::size_t>(source) >= slots_.size()) last_used_[static_cast<std::size_t>(source)] = ++clock_;
    auto& kept = cached_[own];
    if (source == slot && llama_memory_seq_rm(memory, slot, static_cast<llama_pos>(best), -1)) {
      kept.resize(best);
    } else {
      llama_memory_seq_rm(memory, slot, -1, -1);
      kept.clear();
      if (source == slot) return 0;  // a model whose memory cannot drop a tail (recurrent) starts over
      llama_memory_seq_cp(memory, source, slot, 0, static_cast<llama_pos>(best));
      kept.assign(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(best));
    }
    prompt_tokens_reused_ += best;
    return best;
  }

  // Keeps what the finished `slot` holds in a store sequence too, so it outlives the slot's next
  // request: in the entry it extends (or one already holding more of it: nothing to do), else an
  // empty entry, else the least recently used. Tagging cells copies nothing.
  void store_prefix(int slot) {
    const auto& tokens = cached_[static_cast<std::size_t>(slot)];
    if (store_entries_ == 0 || tokens.empty()) return;
    std::optional<std::size_t> extended, empty, oldest;
    for (std::size_t e = slots_.size(); e < cached_.size(); ++e) {
      const auto shared = common_prefix(cached_[e], tokens, tokens.size());
      if (shared == tokens.size()) {  // it holds all of these already
        last_used_[e] = ++clock_;
        return;
      }
      if (!cached_[e].empty() && shared == cached_[e].size()) {
        extended = e;
        break;
      }
      if (cached_[e].empty()) {
        if (!empty) empty = e;
      } else if (!oldest || last_used_[e] < last_used_[*oldest]) {
        oldest = e;
      }
    }
    const auto chosen = extended ? *extended : empty ? *empty : *oldest;
    auto* memory = llama_get_memory(context_);
    const auto entry = static_cast<llama_seq_id>(chosen);
    llama_memory_seq_rm(memory, entry, -1, -1);
    llama_memory_seq_cp(memory, slot, entry, 0, static_cast<llama_pos>(tokens.size()));
    cached_[chosen] = tokens;
    last_used_[chosen] = ++clock_;
  }

  // Frees the cells idle slots and the store keep for the prefix cache; false when there were none.
  bool drop_idle_prefixes() {
    bool dropped = false;
    for (std::size_t j = 0; j < cached_.size(); ++j)
      if ((j >= slots_.size() || !slots_[j].active) && !cached_[j].empty()) {
        llama_memory_seq_rm(llama_get_memory(context_), static_cast<llama_seq_id>(j), -1, -1);
        cached_[j].clear();
        dropped = true;
      }
    return dropped;
  }

  bool unified_kv() const { return kv_unified_; }

  // Positions 0..n-1 the slot's sequence has cells for: counted by the cache, not by the slot's
  // bookkeeping, which runs ahead of a decode that failed.
  std::size_t positions_held(std::size_t slot) const {
    const auto last = llama_memory_seq_pos_max(llama_get_memory(context_), static_cast<llama_seq_id>(slot));
    return last < 0 ? 0 : static_cast<std::size_t>(last) + 1;
  }

  SlotState& slot_at(int slot) {
    if (slot < 0 || slot >= max_slots()) throw Error("llama.cpp: no sequence slot " + std::to_string(slot));
    return slots_[static_cast<std::size_t>(slot)];
  }

  void add_token(TokenId token, llama_pos position, int sequence, bool wants_logits) {
    const int i = batch_.n_tokens++;
    batch_.token[i] = token;
    batch_.pos[i] = position;
    batch_.n_seq_id[i] = 1;
    batch_.seq_id[i][0] = sequence;
    batch_.logits[i] = wants_logits;
  }

  void record_settings(const SessionOptions& options, const llama_context_params& params, int per_sequence, int ctx_train) {
    auto requested = [&](const std::string& key) { return option_or(options.extras, key, ""); };
    const std::string from_context = "read back from the context";
    // Without --opt ctx infermark asks for the trained length; the result still says nobody asked.
    auto ctx = read_back("ctx", std::to_string(per_sequence), std::to_string(context_length()),
                         std::string(kv_unified_ ? "tokens per sequence: the shared KV buffer (llama_n_ctx) over its sequences"
                                                 : "tokens per sequence (llama_n_ctx_seq)") +
                             "; the model was trained for " + std::to_string(ctx_train));
    ctx.requested = requested("ctx");
    char description[128] = {};
    llama_model_desc(model_, description, sizeof description);
    settings_ = {
        threads_setting(options.intra_op_threads),
        {"inter_op_threads", options.inter_op_threads > 0 ? std::to_string(options.inter_op_threads) : "", "n/a",
         configured_state(options.inter_op_threads == 0), "llama.cpp has one thread pool per context"},
        {"precision", options.precision, description, SettingState::kNotApplied,
         "weight precision is fixed by the GGUF file (" + std::string(description) + "); the KV cache is F16"},
        read_back("architecture", "", architecture_, "the GGUF file's general.architecture"),
        read_back("parameters", "", std::to_string(llama_model_n_params(model_)),
                  "weights in the GGUF file (llama_model_n_params)"),
        read_back(
            "sequence_slots", std::to_string(options.expected_concurrency),
            std::to_string(llama_n_seq_max(context_) - store_entries_),
            "sequences decoded together in one batch (llama_n_seq_max" +
                (store_entries_ > 0 ? " less the " + std::to_string(store_entries_) + " prefix_cache_entries" : std::string()) +
                ")"),
        ctx,
        read_back("n_batch", requested("n_batch"), std::to_string(llama_n_batch(context_)), from_context),
        read_back("n_ubatch", requested("n_ubatch"), std::to_string(llama_n_ubatch(context_)), from_context),
        {"flash_attn", requested("flash_attn"), flash_attention_effective(params.flash_attn_type), SettingState::kUnverified, ""},
        {"kv_unified", requested("kv_unified"), params.kv_unified ? "on" : "off", SettingState::kUnverified,
         prefix_cache_ && requested("kv_unified").empty() ? "on because prefix_cache shares prefixes across slots" : ""},
        {"prefix_cache", requested("prefix_cache"),
         !prefix_cache_       ? std::string("off")
         : !params.kv_unified ? std::string("on (each slot's own prefix)")
                              : "on (any slot's prefix, " + std::to_string(store_entries_) + " more stored)",
         SettingState::kUnverified, "prompt KV cells kept after a request and reused by the next prompt that starts alike"},
    };
  }

  // The context's own thread counts: n_threads for decoding, n_threads_batch for prompts, both
  // set to the request; verified only when both are what was asked.
  EffectiveSetting threads_setting(int requested) const {
    const int decode = llama_n_threads(context_), prompt = llama_n_threads_batch(context_);
    const std::string how = "llama_n_threads and llama_n_threads_batch, read back from the context";
    if (decode == prompt) return observed_threads(requested, decode, how);
    return {"intra_op_threads", requested > 0 ? std::to_string(requested) : "",
            std::to_string(decode) + " decoding, " + std::to_string(prompt) + " prompts",
            requested > 0 ? SettingState::kNotApplied : SettingState::kVerified, how};
  }

  llama_model* model_ = nullptr;
  llama_context* context_ = nullptr;
  const llama_vocab* vocab_ = nullptr;
  std::vector<TokenId> end_tokens_;  // end-of-generation tokens, barred before a request's min_tokens
  llama_batch batch_{};
  int batch_capacity_ = 0;
  std::string architecture_;
  std::vector<SlotState> slots_;
  // Per sequence (the slots', then the store's): the tokens its cells hold while idle (prefix cache).
  std::vector<std::vector<TokenId>> cached_;
  std::vector<std::uint64_t> last_used_;  // store entries: when each last gave or took a prefix
  std::uint64_t clock_ = 0;
  std::size_t store_entries_ = 0;
  bool prefix_cache_ = false, kv_unified_ = false;
  std::uint64_t prompt_tokens_reused_ = 0;
  std::vector<EffectiveSetting> settings_;
};

class LlamaCppBackend final : public Backend {
 public:
  LlamaCppBackend() {
    static std::once_flag once;
    std::call_once(once, [] {
      LogCapture::instance();
      llama_backend_init();
    });
  }

  BackendInfo info() const override {
    return declared_backend_info(kName, INFERMARK_LLAMACPP_VERSION, {"cpu"},
                                 "built from source by scripts/setup (" INFERMARK_LLAMACPP_SOURCE
                                 "); CPU build without native tuning; " +
                                     std::string(llama_print_system_info()),
                                 kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = true}; }

  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions&) override {
    throw Error("llama.cpp runs GGUF language models as generators (" + model.string() +
                "): use the generation scenario (infermark run MODEL.gguf picks it)");
  }

  std::unique_ptr<Generator> open_generator(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<LlamaCppGenerator>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::LlamaCppBackend)

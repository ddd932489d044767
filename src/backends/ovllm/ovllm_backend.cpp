// OpenVINO backend for language models: a stateful LLM IR folder (*.ov, optimum-intel's export,
// the form OpenVINO GenAI runs) on the OpenVINO C++ runtime, as a Generator. Each sequence slot
// is an infer request holding its own KV cache as model state; a step runs the active ones in
// turn (batch 1 each), as OpenVINO GenAI's stateful LLMPipeline runs one sequence. Like GenAI,
// the head computes logits for the last prompt position only; perplexity compiles the model
// once more without that change. Tokenizer and detokenizer are openvino-tokenizers IRs.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <memory>
#include <mutex>
#include <openvino/openvino.hpp>
#include <optional>
#include <random>
#include <set>

#include "backends/declared.hpp"
#include "backends/generator.hpp"
#include "backends/options.hpp"
#include "backends/ovllm/last_position_logits.hpp"
#include "backends/ovllm/llm_folder.hpp"
#include "backends/ovllm/token_sampling.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "ovllm";

const std::vector<OptionDoc> kOptions{
    {"ctx", "N", "prompt + output of the workload", "most tokens per sequence (at most the model's max_position_embeddings)"},
    {"kv_cache_precision", "u8|f16|f32", "the CPU plugin's default", "element type the CPU plugin keeps the KV cache in"}};

// One core for the process, with openvino-tokenizers' operations registered once.
ov::Core& core() {
  static ov::Core instance;
  static std::once_flag extension;
  std::call_once(extension, [] { instance.add_extension(INFERMARK_OV_TOKENIZERS_LIBRARY); });
  return instance;
}

// OpenVINO's own exceptions become infermark::Error naming what was being done.
template <typename Call>
auto checked(const std::string& doing, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const ov::Exception& e) {
    throw Error("OpenVINO: " + doing + ": " + e.what());
  }
}

struct SlotState {
  bool active = false;
  bool serving = false;
  std::vector<TokenId> prompt;
  int max_new_tokens = 0;
  int generated = 0;
  std::int64_t past = 0;  // tokens already in the slot's KV state
  TokenId last = 0;       // the token the next decode step feeds
  Sampling sampling;
  std::mt19937_64 random;
};

ov::Tensor int64_tensor(const std::vector<std::int64_t>& values) {
  ov::Tensor tensor(ov::element::i64, {1, values.size()});
  std::copy(values.begin(), values.end(), tensor.data<std::int64_t>());
  return tensor;
}

class OvLlmGenerator final : public Generator {
 public:
  OvLlmGenerator(const std::filesystem::path& folder, const SessionOptions& options)
      : options_(options), folder_(read_ov_llm_folder(folder)) {
    if (options.device != "cpu")
      throw Error(std::string(kName) + ": device '" + options.device + "' is not supported (cpu only)");
    const auto ctx_option = option_or(options.extras, "ctx", "");
    max_length_ = ctx_option.empty() ? folder_.context_length : parse_count_option(kName, "ctx", ctx_option);
    if (max_length_ < 2) throw Error(std::string(kName) + ": --opt ctx must be at least 2");
    max_length_ = std::min(max_length_, folder_.context_length);

    auto model = checked("reading " + folder_.model_xml.string(), [&] { return core().read_model(folder_.model_xml); });
    for (const char* input : {"input_ids", "attention_mask", "position_ids", "beam_idx"}) {
      bool found = false;
      for (const auto& port : model->inputs()) found = found || port.get_names().count(input) > 0;
      if (!found)
        throw Error(folder_.model_xml.string() + ": input '" + input +
                    "' missing (a stateful LLM IR from optimum-intel's text-generation-with-past export has it)");
    }
    compute_logits_for_last_position_only(model);
    compiled_ = compile(model);
    tokenizer_ = checked("compiling " + folder_.tokenizer_xml.string(),
                         [&] { return core().compile_model(folder_.tokenizer_xml, "CPU").create_infer_request(); });
    detokenizer_ = checked("compiling " + folder_.detokenizer_xml.string(),
                           [&] { return core().compile_model(folder_.detokenizer_xml, "CPU").create_infer_request(); });
    const auto slots = static_cast<std::size_t>(std::max(1, options.expected_concurrency));
    slots_.resize(slots);
    for (std::size_t i = 0; i < slots; ++i)
      requests_.push_back(checked("creating an infer request", [&] { return compiled_.create_infer_request(); }));
    record_settings();
  }

  int context_length() const override { return max_length_; }
  int vocab_size() const override { return folder_.vocab_size; }
  int max_slots() const override { return static_cast<int>(slots_.size()); }
  GenerationBatching batching() const override { return GenerationBatching::kSequencesInTurn; }

  std::vector<TokenId> prompt_vocabulary() const override {
    std::vector<TokenId> tokens;
    for (TokenId t = 0; t < vocab_size(); ++t)
      if (!folder_.special_tokens.count(t) && !folder_.end_tokens.count(t)) tokens.push_back(t);
    return tokens;
  }

  void start(int slot, const std::vector<TokenId>& prompt, int max_new_tokens) override {
    auto& s = slot_at(slot);
    if (s.active) throw Error("OpenVINO: sequence slot " + std::to_string(slot) + " is busy");
    if (prompt.empty() || max_new_tokens < 1) throw Error("OpenVINO: a request needs at least one prompt and one output token");
    if (static_cast<int>(prompt.size()) + max_new_tokens > context_length())
      throw Error("OpenVINO: prompt of " + std::to_string(prompt.size()) + " tokens + " + std::to_string(max_new_tokens) +
                  " output tokens exceeds the context of " + std::to_string(context_length()) + " tokens per sequence");
    s = SlotState{};
    s.active = true;
    s.prompt = prompt;
    s.max_new_tokens = max_new_tokens;
  }

  void set_sampling(int slot, const Sampling& sampling) override {
    if (sampling.temperature < 0 || sampling.top_p <= 0 || sampling.top_p > 1)
      throw Error("OpenVINO: temperature must be >= 0 and top_p in (0, 1]");
    auto& s = slot_at(slot);
    if (s.generated > 0) throw Error("OpenVINO: sampling must be set before the request's first step");
    s.serving = true;
    s.sampling = sampling;
    s.random.seed(sampling.seed);
  }

  // Serving tokenizes on its io threads while the stepping thread detokenizes: one infer request
  // each, so each is locked.
  std::vector<TokenId> tokenize(const std::string& text) const override {
    ov::Tensor input(ov::element::string, {1});
    input.data<std::string>()[0] = text;
    std::lock_guard lock(tokenizer_mutex_);
    return checked("tokenizing the prompt", [&] {
      tokenizer_.set_input_tensor(input);
      tokenizer_.infer();
      const auto ids = tokenizer_.get_tensor("input_ids");
      std::vector<TokenId> tokens(ids.get_size());
      std::transform(ids.data<const std::int64_t>(), ids.data<const std::int64_t>() + ids.get_size(), tokens.begin(),
                     [](std::int64_t id) { return static_cast<TokenId>(id); });
      return tokens;
    });
  }

  std::string token_piece(TokenId token) const override {
    std::lock_guard lock(detokenizer_mutex_);
    return checked("decoding token " + std::to_string(token), [&] {
      detokenizer_.set_input_tensor(int64_tensor({token}));
      detokenizer_.infer();
      return detokenizer_.get_output_tensor(0).data<std::string>()[0];
    });
  }

  bool is_end_of_generation(TokenId token) const override { return folder_.end_tokens.count(token) > 0; }

  std::string chat_prompt(const std::vector<ChatMessage>& messages) const override {
    if (!folder_.chatml)
      throw Error("OpenVINO: the model folder's chat template is not ChatML, the one format infermark formats");
    std::string prompt;
    for (const auto& m : messages) prompt += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    return prompt + "<|im_start|>assistant\n";
  }

  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      if (!s.active || s.generated >= s.max_new_tokens) continue;
      auto& request = requests_[i];
      if (s.generated == 0) {
        request.reset_state();
        std::vector<std::int64_t> ids(s.prompt.begin(), s.prompt.end());
        forward(request, ids, 0);
        s.past = static_cast<std::int64_t>(ids.size());
      } else {
        forward(request, {s.last}, s.past);
        ++s.past;
      }
      s.last = next_token(request, s);
      ++s.generated;
      on_token({static_cast<int>(i), s.last});
    }
  }

  void finish(int slot) override { slot_at(slot) = SlotState{}; }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

  // One forward pass of the window through the model compiled with logits at every position.
  WindowScore score_window(const std::vector<TokenId>& window, std::size_t first_scored) override {
    if (first_scored + 1 >= window.size())
      throw Error("OpenVINO: a window of " + std::to_string(window.size()) + " tokens scores nothing from position " +
                  std::to_string(first_scored));
    if (static_cast<int>(window.size()) > context_length())
      throw Error("OpenVINO: a window of " + std::to_string(window.size()) + " tokens exceeds the context (" +
                  std::to_string(context_length()) + ")");
    if (!scoring_) {
      auto full = checked("reading " + folder_.model_xml.string(), [&] { return core().read_model(folder_.model_xml); });
      scoring_ = checked("creating the scoring request", [&] { return compile(full).create_infer_request(); });
    }
    scoring_->reset_state();
    forward(*scoring_, std::vector<std::int64_t>(window.begin(), window.end()), 0);
    const auto logits = scoring_->get_tensor("logits");
    const auto& shape = logits.get_shape();
    if (shape.size() != 3 || shape[1] != window.size() || static_cast<int>(shape[2]) != vocab_size() ||
        logits.get_element_type() != ov::element::f32)
      throw Error("OpenVINO: the model's logits are not one float32 row per prompt position (perplexity needs them)");
    const auto* rows = logits.data<const float>();
    WindowScore score;
    for (std::size_t i = first_scored; i + 1 < window.size(); ++i) {
      score.negative_log_likelihood += negative_log_likelihood(rows + i * shape[2], vocab_size(), window[i + 1]);
      ++score.tokens;
    }
    return score;
  }

 private:
  SlotState& slot_at(int slot) {
    if (slot < 0 || slot >= max_slots()) throw Error("OpenVINO: no sequence slot " + std::to_string(slot));
    return slots_[static_cast<std::size_t>(slot)];
  }

  ov::CompiledModel compile(const std::shared_ptr<ov::Model>& model) const {
    // One sequence per request, latency-bound, as OpenVINO GenAI compiles its stateful pipeline.
    ov::AnyMap config{ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY)};
    if (options_.intra_op_threads > 0) config.emplace(ov::inference_num_threads(options_.intra_op_threads));
    if (const auto kv = option_or(options_.extras, "kv_cache_precision", ""); !kv.empty())
      config.emplace(ov::hint::kv_cache_precision(parse_kv_precision(kv)));
    return checked("compiling " + folder_.model_xml.string() + " for CPU",
                   [&] { return core().compile_model(model, "CPU", config); });
  }

  static ov::element::Type parse_kv_precision(const std::string& text) {
    if (text == "u8") return ov::element::u8;
    if (text == "f16") return ov::element::f16;
    if (text == "f32") return ov::element::f32;
    throw Error("--opt kv_cache_precision=" + text + ": backend 'ovllm' expects u8, f16 or f32");
  }

  // Feeds `ids` after `past` tokens already in the request's state.
  static void forward(ov::InferRequest& request, const std::vector<std::int64_t>& ids, std::int64_t past) {
    std::vector<std::int64_t> positions(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) positions[i] = past + static_cast<std::int64_t>(i);
    ov::Tensor mask(ov::element::i64, {1, static_cast<std::size_t>(past) + ids.size()});
    std::fill_n(mask.data<std::int64_t>(), mask.get_size(), 1);
    ov::Tensor beam(ov::element::i32, {1});
    beam.data<std::int32_t>()[0] = 0;
    checked("running the model", [&] {
      request.set_tensor("input_ids", int64_tensor(ids));
      request.set_tensor("attention_mask", mask);
      request.set_tensor("position_ids", int64_tensor(positions));
      request.set_tensor("beam_idx", beam);
      request.infer();
    });
  }

  // The last position's logits decide. Benchmarks fix the output length as the other engines do:
  // an end token is never chosen (OpenVINO GenAI's min_new_tokens does the same).
  TokenId next_token(ov::InferRequest& request, SlotState& s) const {
    const auto logits = request.get_tensor("logits");
    if (logits.get_element_type() != ov::element::f32 || logits.get_shape().back() != static_cast<std::size_t>(vocab_size()))
      throw Error("OpenVINO: the model's logits are not float32 rows of " + std::to_string(vocab_size()) + " tokens");
    const auto* row = logits.data<const float>() + (logits.get_size() - static_cast<std::size_t>(vocab_size()));
    if (!s.serving) return greedy_token(row, vocab_size(), folder_.end_tokens);
    static const std::set<TokenId> kNone;
    return sampled_token(row, vocab_size(), s.sampling, s.random,
                         s.generated < s.sampling.min_tokens ? folder_.end_tokens : kNone);
  }

  void record_settings() {
    const std::string from_compiled = "read back from the compiled model";
    const auto threads = compiled_.get_property(ov::inference_num_threads);
    const auto kv = compiled_.get_property(ov::hint::kv_cache_precision);
    const auto precision = compiled_.get_property(ov::hint::inference_precision);
    settings_ = {
        observed_threads(options_.intra_op_threads, static_cast<int>(threads), "ov::inference_num_threads, " + from_compiled),
        no_inter_op_threads(options_.inter_op_threads, "OpenVINO has no inter-op thread setting"),
        {"precision", options_.precision, folder_.weight_compression.empty() ? "as exported" : folder_.weight_compression,
         SettingState::kNotApplied, "weight precision is fixed by the export (the folder's openvino_model.bin)"},
        read_back("inference_precision", "", precision.get_type_name(), from_compiled + " (activations)"),
        read_back("kv_cache_precision", option_or(options_.extras, "kv_cache_precision", ""), kv.get_type_name(), from_compiled),
        read_back("architecture", "", folder_.architecture, "config.json model_type"),
        read_back("device", options_.device, "cpu", "compiled for the CPU plugin"),
        read_back("parameters", "", folder_.parameters.empty() ? "unknown" : folder_.parameters,
                  "architecture.n_params of the zoo manifest beside the folder"),
        read_back("openvino", "", ov::get_openvino_version().buildNumber, "ov::get_openvino_version()"),
        read_back("sequence_slots", std::to_string(options_.expected_concurrency), std::to_string(slots_.size()),
                  "one infer request (its own KV state) per slot, batch 1, stepped in turn"),
        {"ctx", option_or(options_.extras, "ctx", ""), std::to_string(max_length_), SettingState::kUnverified,
         "prompt + output of each request is at most this; the model allows " + std::to_string(folder_.context_length)},
        read_back("logits", "", "last prompt position only", "the head sliced before its MatMul, as OpenVINO GenAI does"),
    };
  }

  SessionOptions options_;
  OvLlmFolder folder_;
  int max_length_ = 0;
  ov::CompiledModel compiled_;
  mutable ov::InferRequest tokenizer_, detokenizer_;
  mutable std::mutex tokenizer_mutex_, detokenizer_mutex_;
  std::vector<ov::InferRequest> requests_;
  std::optional<ov::InferRequest> scoring_;
  std::vector<SlotState> slots_;
  std::vector<EffectiveSetting> settings_;
};

class OvLlmBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(kName, ov::get_openvino_version().buildNumber, {"cpu"},
                                 "OpenVINO's C++ runtime on a stateful LLM IR (optimum-intel export), tokenizers by "
                                 "openvino-tokenizers; one infer request per sequence, stepped in turn",
                                 kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = true}; }

  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions&) override {
    throw Error("OpenVINO runs LLM folders as generators (" + model.string() +
                "): use the generation scenario (infermark run MODEL.ov picks it)");
  }

  std::unique_ptr<Generator> open_generator(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<OvLlmGenerator>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::OvLlmBackend)

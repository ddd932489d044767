// ONNX Runtime GenAI backend: a model folder of its model builder (genai_config.json, model.onnx,
// tokenizer.json; infermark names such folders *.genai) through GenAI's C API, as a Generator.
// Each sequence slot is an OgaGenerator of batch size 1 and a step runs the active ones in turn:
// the C API's generator fixes its batch when created, so requests cannot join or leave a running
// batch (GenAI's newer continuous-batching Engine API is not declared here). Results say so.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/declared.hpp"
#include "backends/generator.hpp"
#include "backends/options.hpp"
#include "backends/ortgenai/oga_api.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "ortgenai";
const std::vector<OptionDoc> kOptions{{"ctx", "N", "prompt + output of the workload",
                                       "most tokens per sequence (GenAI's max_length; at most the model's context_length)"}};

const OgaApi& api() { return OgaApi::open(INFERMARK_ORTGENAI_DIR, INFERMARK_ORTGENAI_VERSION); }

template <typename T>
OgaHandle<T> owned(T* object, void (*destroy)(T*)) {
  return OgaHandle<T>(object, OgaDeleter<T>{destroy});
}

// What the folder's genai_config.json and tokenizer.json say that the C API does not: the sizes,
// the end tokens and the special (added) tokens a synthetic prompt must not contain.
struct ModelFolder {
  std::string type;  // model.type, e.g. "llama"
  int context_length = 0;
  int vocab_size = 0;
  std::set<TokenId> end_tokens;      // model.eos_token_id (a number or a list)
  std::set<TokenId> special_tokens;  // tokenizer.json added_tokens marked special
  std::string parameters;            // the zoo manifest's architecture.n_params, "" without one
  bool chatml = false;               // the folder's chat template is ChatML (<|im_start|> turns)
};

// The C API this backend declares has no chat-template call; the folder's template (the builder
// copies chat_template.jinja, or tokenizer_config.json carries it) is recognised as ChatML by its
// turn marker, as llama.cpp recognises templates, and formatted here. Others are refused.
bool chat_template_is_chatml(const std::filesystem::path& folder) {
  for (const auto* name : {"chat_template.jinja", "tokenizer_config.json"}) {
    std::ifstream in(folder / name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("<|im_start|>") != std::string::npos) return true;
  }
  return false;
}

// GenAI's folder does not say how many weights the model has; the zoo's manifest beside it
// (<folder stem>.json) does. "" when there is none or it lacks the count.
std::string parameters_from_manifest(const std::filesystem::path& folder) {
  const auto path = folder.has_filename() ? folder : folder.parent_path();
  std::ifstream in(path.parent_path() / (path.stem().string() + ".json"));
  if (!in) return "";
  const auto manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded()) return "";
  const auto count = manifest.value("/architecture/n_params"_json_pointer, nlohmann::json());
  return count.is_number_integer() ? std::to_string(count.get<long long>()) : "";
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in)
    throw Error(file.string() + ": missing (an ONNX Runtime GenAI model folder needs it; build one with infermark zoo build)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string() + ": not valid JSON (" + e.what() + ")");
  }
}

ModelFolder read_model_folder(const std::filesystem::path& folder) {
  if (!std::filesystem::is_directory(folder))
    throw Error(folder.string() + ": an ONNX Runtime GenAI model is a folder (genai_config.json, model.onnx, tokenizer.json)");
  const auto config_file = folder / "genai_config.json";
  const auto config = read_json(config_file);
  ModelFolder m;
  try {
    const auto& model = config.at("model");
    m.type = model.at("type").get<std::string>();
    m.context_length = model.at("context_length").get<int>();
    m.vocab_size = model.at("vocab_size").get<int>();
    const auto& eos = model.at("eos_token_id");
    if (eos.is_array())
      for (const auto& id : eos) m.end_tokens.insert(id.get<TokenId>());
    else
      m.end_tokens.insert(eos.get<TokenId>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(config_file.string() + ": " + e.what());
  }
  const auto tokenizer_file = folder / "tokenizer.json";
  const auto tokenizer = read_json(tokenizer_file);
  for (const auto& added : tokenizer.value("added_tokens", nlohmann::json::array()))
    if (added.value("special", false)) m.special_tokens.insert(added.at("id").get<TokenId>());
  if (m.context_length < 2 || m.vocab_size < 1)
    throw Error(config_file.string() + ": model.context_length or model.vocab_size is not positive");
  m.parameters = parameters_from_manifest(folder);
  m.chatml = chat_template_is_chatml(folder);
  return m;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

struct SlotState {
  bool active = false;
  std::vector<TokenId> prompt;
  int max_new_tokens = 0;
  int generated = 0;
  bool serving = false;  // set_sampling() called: stop at end tokens, sample as asked
  Sampling sampling;
  OgaHandle<OgaGenerator> generator{nullptr, OgaDeleter<OgaGenerator>{}};
};

class OrtGenAiGenerator final : public Generator {
 public:
  OrtGenAiGenerator(const std::filesystem::path& folder, const SessionOptions& options) : api_(api()) {
    check_option_keys(kName, options.extras, kOptions);
    folder_ = read_model_folder(folder);
    const auto ctx_option = option_or(options.extras, "ctx", "");
    max_length_ = ctx_option.empty() ? folder_.context_length : parse_count_option(kName, "ctx", ctx_option);
    if (max_length_ < 2) throw Error(std::string(kName) + ": --opt ctx must be at least 2");
    max_length_ = std::min(max_length_, folder_.context_length);

    OgaConfig* config = nullptr;
    api_.check(api_.create_config(folder.c_str(), &config), "ONNX Runtime GenAI cannot read " + folder.string());
    auto config_handle = owned(config, api_.destroy_config);
    // CPU: the device this backend reports; the thread counts go into the decoder's session options.
    api_.check(api_.config_clear_providers(config), "ONNX Runtime GenAI: clearing the execution providers");
    nlohmann::json session_options = nlohmann::json::object();
    if (options.intra_op_threads > 0) session_options["intra_op_num_threads"] = options.intra_op_threads;
    if (options.inter_op_threads > 0) session_options["inter_op_num_threads"] = options.inter_op_threads;
    if (!session_options.empty()) {
      const nlohmann::json overlay{{"model", {{"decoder", {{"session_options", session_options}}}}}};
      api_.check(api_.config_overlay(config, overlay.dump().c_str()), "ONNX Runtime GenAI: applying the thread counts");
    }
    OgaModel* model = nullptr;
    const auto counted = threads_started_by(
        [&] { api_.check(api_.create_model(config, &model), "ONNX Runtime GenAI cannot load " + folder.string()); });
    const int started = counted.value_or(-1);
    model_ = owned(model, api_.destroy_model);
    OgaTokenizer* tokenizer = nullptr;
    api_.check(api_.create_tokenizer(model, &tokenizer), "ONNX Runtime GenAI cannot load the tokenizer of " + folder.string());
    tokenizer_ = owned(tokenizer, api_.destroy_tokenizer);
    slots_.resize(static_cast<std::size_t>(std::max(1, options.expected_concurrency)));
    record_settings(options, started, counted.has_value());
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
    if (s.active) throw Error("ONNX Runtime GenAI: sequence slot " + std::to_string(slot) + " is busy");
    if (prompt.empty() || max_new_tokens < 1)
      throw Error("ONNX Runtime GenAI: a request needs at least one prompt and one output token");
    if (static_cast<int>(prompt.size()) + max_new_tokens > context_length())
      throw Error("ONNX Runtime GenAI: prompt of " + std::to_string(prompt.size()) + " tokens + " +
                  std::to_string(max_new_tokens) + " output tokens exceeds the context of " + std::to_string(context_length()) +
                  " tokens per sequence");
    s = SlotState{};
    s.active = true;
    s.prompt = prompt;
    s.max_new_tokens = max_new_tokens;
  }

  void set_sampling(int slot, const Sampling& sampling) override {
    if (sampling.temperature < 0 || sampling.top_p <= 0 || sampling.top_p > 1)
      throw Error("ONNX Runtime GenAI: temperature must be >= 0 and top_p in (0, 1]");
    auto& s = slot_at(slot);
    if (s.generator) throw Error("ONNX Runtime GenAI: sampling must be set before the request's first step");
    s.serving = true;
    s.sampling = sampling;
  }

  std::vector<TokenId> tokenize(const std::string& text) const override {
    OgaSequences* sequences = nullptr;
    api_.check(api_.create_sequences(&sequences), "ONNX Runtime GenAI: creating a token sequence");
    auto owned_sequences = owned(sequences, api_.destroy_sequences);
    api_.check(api_.encode(tokenizer_.get(), text.c_str(), sequences), "ONNX Runtime GenAI: tokenizing the prompt");
    const auto* data = api_.sequence_data(sequences, 0);
    return {data, data + api_.sequence_count(sequences, 0)};
  }

  std::string token_piece(TokenId token) const override {
    const char* text = nullptr;
    api_.check(api_.decode(tokenizer_.get(), &token, 1, &text), "ONNX Runtime GenAI: decoding token " + std::to_string(token));
    std::string piece = text ? text : "";
    api_.destroy_string(text);
    return piece;
  }

  bool is_end_of_generation(TokenId token) const override { return folder_.end_tokens.count(token) > 0; }

  std::string chat_prompt(const std::vector<ChatMessage>& messages) const override {
    if (!folder_.chatml)
      throw Error("ONNX Runtime GenAI: the model folder's chat template is not ChatML, the one format infermark formats");
    std::string prompt;
    for (const auto& m : messages) prompt += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    return prompt + "<|im_start|>assistant\n";
  }

  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      if (!s.active || s.generated >= s.max_new_tokens) continue;
      if (!s.generator) prefill(s);
      api_.check(api_.generate_next_token(s.generator.get()), "ONNX Runtime GenAI: generating a token");
      const int32_t* tokens = nullptr;
      std::size_t count = 0;
      api_.check(api_.next_tokens(s.generator.get(), &tokens, &count), "ONNX Runtime GenAI: reading the generated token");
      if (count != 1) throw Error("ONNX Runtime GenAI: a batch-1 generator returned " + std::to_string(count) + " tokens");
      ++s.generated;
      on_token({static_cast<int>(i), tokens[0]});
    }
  }

  void finish(int slot) override { slot_at(slot) = SlotState{}; }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

  // One prefill of the window; the model returns logits for every position of a prompt (the model
  // builder's default), so each scored token costs no extra pass. The start token is not
  // substituted: SmolLM2's tokenizer, like GPT-2's, adds none.
  WindowScore score_window(const std::vector<TokenId>& window, std::size_t first_scored) override {
    if (first_scored + 1 >= window.size())
      throw Error("ONNX Runtime GenAI: a window of " + std::to_string(window.size()) + " tokens scores nothing from position " +
                  std::to_string(first_scored));
    if (static_cast<int>(window.size()) > context_length())
      throw Error("ONNX Runtime GenAI: a window of " + std::to_string(window.size()) + " tokens exceeds the context (" +
                  std::to_string(context_length()) + ")");
    SlotState scoring;
    scoring.prompt = window;
    scoring.max_new_tokens = 1;
    prefill(scoring);
    OgaTensor* logits = nullptr;
    api_.check(api_.get_output(scoring.generator.get(), "logits", &logits), "ONNX Runtime GenAI: reading the logits");
    auto tensor = owned(logits, api_.destroy_tensor);
    const auto shape = tensor_shape(logits);
    const auto positions = static_cast<std::size_t>(shape.size() == 3 ? shape[1] : 0);
    const int vocabulary = shape.empty() ? 0 : static_cast<int>(shape.back());
    if (shape.size() != 3 || positions != window.size() || vocabulary != vocab_size())
      throw Error("ONNX Runtime GenAI: the model's logits are not one row per prompt position (perplexity needs them)");
    OgaElementType type{};
    api_.check(api_.tensor_type(logits, &type), "ONNX Runtime GenAI: reading the logits' type");
    if (type != OgaElementType_float32) throw Error("ONNX Runtime GenAI: perplexity reads float32 logits only");
    void* data = nullptr;
    api_.check(api_.tensor_data(logits, &data), "ONNX Runtime GenAI: reading the logits");
    const auto* rows = static_cast<const float*>(data);
    WindowScore score;
    for (std::size_t i = first_scored; i + 1 < window.size(); ++i) {
      const float* row = rows + i * static_cast<std::size_t>(vocabulary);
      const float top = *std::max_element(row, row + vocabulary);
      double total = 0;
      for (int t = 0; t < vocabulary; ++t) total += std::exp(static_cast<double>(row[t]) - top);
      score.negative_log_likelihood += std::log(total) + top - row[window[i + 1]];
      ++score.tokens;
    }
    return score;
  }

 private:
  SlotState& slot_at(int slot) {
    if (slot < 0 || slot >= max_slots()) throw Error("ONNX Runtime GenAI: no sequence slot " + std::to_string(slot));
    return slots_[static_cast<std::size_t>(slot)];
  }

  // A generator sized for this request, its prompt appended (the prompt's forward pass runs here).
  // Benchmarks fix the output length as llama.cpp's backend does by decoding past the end token:
  // min_length keeps the end tokens from being chosen until the asked length is reached.
  void prefill(SlotState& s) {
    OgaGeneratorParams* params = nullptr;
    api_.check(api_.create_params(model_.get(), &params), "ONNX Runtime GenAI: creating generator parameters");
    auto owned_params = owned(params, api_.destroy_params);
    const auto length = static_cast<double>(s.prompt.size() + static_cast<std::size_t>(s.max_new_tokens));
    set_number(params, "max_length", length);
    set_number(params, "batch_size", 1);
    // Served requests: end tokens are barred until their min_tokens are out (ignore_eos: all of them).
    const auto min_new = s.serving ? std::min(s.sampling.min_tokens, s.max_new_tokens) : s.max_new_tokens;
    if (min_new > 0) set_number(params, "min_length", static_cast<double>(s.prompt.size() + static_cast<std::size_t>(min_new)));
    const bool sample = s.serving && s.sampling.temperature > 0;
    api_.check(api_.params_set_bool(params, "do_sample", sample), "ONNX Runtime GenAI: setting do_sample");
    if (sample) {
      set_number(params, "temperature", s.sampling.temperature);
      set_number(params, "top_p", s.sampling.top_p);
      set_number(params, "random_seed", static_cast<double>(s.sampling.seed % (1ull << 31)));
    }
    OgaGenerator* generator = nullptr;
    api_.check(api_.create_generator(model_.get(), params, &generator), "ONNX Runtime GenAI: creating a generator");
    s.generator = owned(generator, api_.destroy_generator);
    api_.check(api_.append_tokens(generator, s.prompt.data(), s.prompt.size()), "ONNX Runtime GenAI: running the prompt");
  }

  void set_number(OgaGeneratorParams* params, const char* name, double value) const {
    api_.check(api_.params_set_number(params, name, value), std::string("ONNX Runtime GenAI: setting ") + name);
  }

  std::vector<std::int64_t> tensor_shape(OgaTensor* tensor) const {
    std::size_t rank = 0;
    api_.check(api_.tensor_rank(tensor, &rank), "ONNX Runtime GenAI: reading a tensor's rank");
    std::vector<std::int64_t> shape(rank);
    api_.check(api_.tensor_shape(tensor, shape.data(), rank), "ONNX Runtime GenAI: reading a tensor's shape");
    return shape;
  }

  std::string model_string(OgaResult* (*call)(const OgaModel*, const char**)) const {
    const char* text = nullptr;
    api_.check(call(model_.get(), &text), "ONNX Runtime GenAI: reading the model's description");
    std::string value = text ? text : "";
    api_.destroy_string(text);
    return value;
  }

  void record_settings(const SessionOptions& options, int started_threads, bool counted) {
    // GenAI runs ONNX Runtime's intra-op pool, made as ONNX Runtime makes it (N - 1 workers for N).
    auto threads = counted ? counted_pool_threads(options.intra_op_threads, started_threads, "the model's ONNX Runtime session",
                                                  "; set through genai_config.json's decoder session_options; telemetry off "
                                                  "(ORT_DISABLE_TELEMETRY=1)")
                           : unverified_threads(options.intra_op_threads, std::to_string(options.intra_op_threads),
                                                "/proc/self/task could not be read");
    settings_ = {
        threads,
        {"inter_op_threads", options.inter_op_threads > 0 ? std::to_string(options.inter_op_threads) : "",
         options.inter_op_threads > 0 ? std::to_string(options.inter_op_threads) : "default", SettingState::kUnverified,
         "decoder session_options.inter_op_num_threads"},
        {"precision", options.precision, "as exported", SettingState::kNotApplied,
         "weight precision is fixed by the model builder's export (the folder's model.onnx)"},
        read_back("architecture", "", model_string(api_.model_type), "OgaModelGetType"),
        read_back("device", options.device, lower(model_string(api_.model_device_type)), "OgaModelGetDeviceType"),
        read_back("parameters", "", folder_.parameters.empty() ? "unknown" : folder_.parameters,
                  "architecture.n_params of the zoo manifest beside the folder"),
        read_back("onnxruntime", "", api_.onnxruntime_version,
                  "the ONNX Runtime GenAI runs on (" + api_.onnxruntime_library + ")"),
        read_back("sequence_slots", std::to_string(options.expected_concurrency), std::to_string(slots_.size()),
                  "one OgaGenerator of batch size 1 per slot, stepped in turn (no batching across sequences)"),
        {"ctx", option_or(options.extras, "ctx", ""), std::to_string(max_length_), SettingState::kUnverified,
         "max_length of each request is its prompt + output (at most this); the model was exported for " +
             std::to_string(folder_.context_length)},
    };
  }

  const OgaApi& api_;
  ModelFolder folder_;
  int max_length_ = 0;
  OgaHandle<OgaModel> model_{nullptr, OgaDeleter<OgaModel>{}};
  OgaHandle<OgaTokenizer> tokenizer_{nullptr, OgaDeleter<OgaTokenizer>{}};
  std::vector<SlotState> slots_;
  std::vector<EffectiveSetting> settings_;
};

class OrtGenAiBackend final : public Backend {
 public:
  BackendInfo info() const override {
    std::string notes = "PyPI onnxruntime-genai " INFERMARK_ORTGENAI_VERSION
                        "'s library through its C API (declared in "
                        "src/backends/ortgenai/oga_0_18_declarations.hpp); one generator per sequence, stepped in turn";
    try {
      notes += "; runs on ONNX Runtime " + api().onnxruntime_version;
    } catch (const Error& e) {
      notes += "; not loadable here: " + std::string(e.what());
    }
    return declared_backend_info(kName, INFERMARK_ORTGENAI_VERSION, {"cpu"}, notes, kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = true}; }

  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions&) override {
    throw Error("ONNX Runtime GenAI runs language-model folders as generators (" + model.string() +
                "): use the generation scenario (infermark run MODEL.genai picks it)");
  }

  std::unique_ptr<Generator> open_generator(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<OrtGenAiGenerator>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::OrtGenAiBackend)

#include "backends/tflite/tflite_c_session.hpp"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <optional>

#include "backends/options.hpp"
#include "backends/tflite/tflite_settings.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

// TfLite's messages for one model or interpreter; the callback is called on the thread that
// called into TfLite, and each interpreter is used by one thread at a time.
struct ErrorLog {
  std::string text;

  static void report(void* self, const char* format, va_list args) {
    char line[1024];
    std::vsnprintf(line, sizeof line, format, args);
    auto& text = static_cast<ErrorLog*>(self)->text;
    if (!text.empty()) text += "; ";
    text += line;
  }
  // The messages since the last take, or `fallback` when TfLite said nothing.
  std::string take(const std::string& fallback) {
    std::string result = text.empty() ? fallback : text;
    text.clear();
    return result;
  }
};

std::vector<std::int64_t> dims_of(const TfLiteIntArray* dims) {
  if (dims == nullptr) return {};
  return std::vector<std::int64_t>(dims->data, dims->data + dims->size);
}

class TfliteCSession final : public Session {
 public:
  TfliteCSession(const TfliteCApi& api, const std::filesystem::path& model, const SessionOptions& options, bool xnnpack)
      : api_(api),
        options_(options),
        threads_(options.intra_op_threads > 0 ? options.intra_op_threads : 1),
        xnnpack_(xnnpack),
        model_(api.model_create_from_file(model.string().c_str(), &ErrorLog::report, &model_log_), api.model_delete) {
    if (!model_) throw Error("TfLite cannot read the model: " + model_log_.take("no reason given"));
    slots_.push_back(make_slot());
    const TfLiteInterpreter* first = slots_[0]->interpreter;
    for (int i = 0; i < api_.input_count(first); ++i) input_specs_.push_back(spec_of(api_.input_tensor(first, i)));
    for (int i = 0; i < api_.output_count(first); ++i) output_specs_.push_back(spec_of(api_.output_tensor(first, i)));
    if (xnnpack_) xnnpack_threads_ = api_.xnnpack_get_options(slots_[0]->delegate)->num_threads;
  }

  // Fixed shapes only: a new shape means resizing the interpreter's tensors and allocating again.
  SessionCapabilities capabilities() const override { return {.in_place_inputs = true, .varying_shapes = false}; }
  const std::vector<TensorSpec>& input_specs() const override { return input_specs_; }
  const std::vector<TensorSpec>& output_specs() const override { return output_specs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots < 1 || slots > max_slots()) throw Error("tflite: " + std::to_string(slots) + " request slots requested");
    if (inputs.size() != input_specs_.size())
      throw Error("tflite: the model takes " + std::to_string(input_specs_.size()) + " inputs");
    while (static_cast<int>(slots_.size()) < slots) slots_.push_back(make_slot());
    slots_.resize(static_cast<std::size_t>(slots));
    for (auto& slot : slots_) bind(*slot, inputs);
  }

  void run(int slot) override {
    Slot& s = *slots_[static_cast<std::size_t>(slot)];
    if (api_.invoke(s.interpreter) != kTfLiteOk) throw Error("tflite: invoke failed: " + s.log.take("no reason given"));
  }
  int max_slots() const override { return 64; }

  std::vector<Tensor> outputs() override {
    const TfLiteInterpreter* interpreter = slots_.at(0)->interpreter;
    std::vector<Tensor> result;
    for (int i = 0; i < api_.output_count(interpreter); ++i) {
      const TfLiteTensor* t = api_.output_tensor(interpreter, i);
      Tensor tensor{output_specs_[static_cast<std::size_t>(i)].name,
                    output_specs_[static_cast<std::size_t>(i)].dtype,
                    current_shape(t),
                    {}};
      tensor.data.resize(api_.tensor_byte_size(t));
      if (api_.tensor_copy_to(t, tensor.data.data(), tensor.data.size()) != kTfLiteOk)
        throw Error("tflite: cannot read output '" + tensor.name + "'");
      result.push_back(std::move(tensor));
    }
    return result;
  }

  void overwrite_input(std::size_t index, std::span<const std::byte> data) override {
    for (auto& slot : slots_) {
      TfLiteTensor* t = api_.input_tensor(slot->interpreter, static_cast<int>(index));
      if (api_.tensor_byte_size(t) != data.size())
        throw Error("input " + std::to_string(index) + ": " + std::to_string(data.size()) + " bytes given, " +
                    std::to_string(api_.tensor_byte_size(t)) + " bound");
      if (api_.tensor_copy_from(t, data.data(), data.size()) != kTfLiteOk)
        throw Error("input " + std::to_string(index) + ": TfLiteTensorCopyFromBuffer failed");
    }
  }

  std::string library_version() const override { return "TfLite " + api_.version; }

  std::vector<EffectiveSetting> effective_settings() const override {
    std::string xnnpack = "off";
    if (xnnpack_) xnnpack = "on (delegate added, " + std::to_string(xnnpack_threads_) + " thread(s))";
    const bool xnnpack_applied = !xnnpack_ || xnnpack_threads_ == threads_;
    auto settings = tflite_settings::common(options_, tflite_settings::Runtime::kCApi);
    const auto library = api_.library_path.substr(api_.library_path.rfind('/') + 1);
    settings.push_back({"runtime_api", "", "TfLite " + api_.version + "'s C API (" + library + ")", SettingState::kVerified,
                        "no Python in the timed call"});
    settings.push_back(threads_setting());
    std::string xnnpack_note;
    if (!xnnpack_applied)
      xnnpack_note = "the XNNPACK delegate reports another thread count";
    else if (xnnpack_)
      xnnpack_note = "the C API lists no execution plan, so how many operators XNNPACK took is not known here";
    settings.push_back({"xnnpack", option_or(options_.extras, "xnnpack", ""), xnnpack,
                        xnnpack_applied ? SettingState::kVerified : SettingState::kNotApplied, xnnpack_note});
    return settings;
  }

 private:
  // Set on the interpreter and the XNNPACK delegate. The delegate starts its pool with the
  // delegate (N - 1 workers beside the calling thread), so counting those verifies the request;
  // without XNNPACK nothing can: the C API has no getter and TfLite's kernels start their pool
  // only when an operator needs it.
  EffectiveSetting threads_setting() const {
    const int asked = options_.intra_op_threads;
    const std::string set = std::to_string(threads_) + (asked > 0 ? "" : " (infermark's default for TfLite)");
    if (!xnnpack_)
      return unverified_threads(asked, set,
                                "TfLiteInterpreterOptionsSetNumThreads; the C API cannot report it and the "
                                "kernels' pool starts only when an operator needs it");
    if (!xnnpack_pool_started_) return unverified_threads(asked, set, "/proc/self/task cannot be read to count XNNPACK's pool");
    return counted_pool_threads(asked, *xnnpack_pool_started_, "the XNNPACK delegate");
  }

  // One interpreter with the delegate and error log it needs alive as long as it lives.
  struct Slot {
    const TfliteCApi& api;
    ErrorLog log;
    TfLiteDelegate* delegate = nullptr;
    TfLiteInterpreter* interpreter = nullptr;
    explicit Slot(const TfliteCApi& a) : api(a) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (interpreter != nullptr) api.interpreter_delete(interpreter);
      if (delegate != nullptr) api.xnnpack_delete(delegate);  // after the interpreter that used it
    }
  };

  std::unique_ptr<Slot> make_slot() {
    auto slot = std::make_unique<Slot>(api_);
    TfLiteInterpreterOptions* options = api_.options_create();
    api_.options_set_num_threads(options, threads_);
    api_.options_set_error_reporter(options, &ErrorLog::report, &slot->log);
    if (xnnpack_) {
      auto xnnpack_options = api_.xnnpack_options_default();
      xnnpack_options.num_threads = threads_;
      const auto started = threads_started_by([&] { slot->delegate = api_.xnnpack_create(&xnnpack_options); });
      if (slots_.empty()) xnnpack_pool_started_ = started;  // the first slot's pool is the one reported
      if (slot->delegate == nullptr) {
        api_.options_delete(options);
        throw Error("TfLite could not create the XNNPACK delegate: " + slot->log.take("no reason given"));
      }
      api_.options_add_delegate(options, slot->delegate);
    }
    slot->interpreter = api_.interpreter_create(model_.get(), options);
    api_.options_delete(options);  // the interpreter keeps what it needs
    if (slot->interpreter == nullptr)
      throw Error("TfLite cannot build an interpreter for the model: " + slot->log.take("no reason given"));
    if (api_.allocate_tensors(slot->interpreter) != kTfLiteOk)
      throw Error("TfLite cannot allocate the model's tensors: " + slot->log.take("no reason given"));
    return slot;
  }

  TensorSpec spec_of(const TfLiteTensor* t) const {
    TensorSpec spec;
    spec.name = api_.tensor_name(t);
    spec.shape = dims_of(api_.tensor_dims_signature(t));  // -1 where the model allows any size
    std::string type = api_.type_name(api_.tensor_type(t));
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
    try {
      spec.dtype = parse_dtype(type);
    } catch (const Error&) {
      throw Error("tensor '" + spec.name + "' has element type " + type + ", which infermark cannot feed");
    }
    spec.dim_names.resize(spec.shape.size());
    return spec;
  }

  std::vector<std::int64_t> current_shape(const TfLiteTensor* t) const {
    std::vector<std::int64_t> shape;
    for (int d = 0; d < api_.tensor_num_dims(t); ++d) shape.push_back(api_.tensor_dim(t, d));
    return shape;
  }

  // Resizes the interpreter's inputs to the bound shapes when they differ, then copies the data.
  void bind(Slot& slot, const std::vector<Tensor>& inputs) {
    bool resized = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& name = input_specs_[i].name;
      if (inputs[i].dtype != input_specs_[i].dtype)
        throw Error("tflite: input '" + name + "' is " + std::string(dtype_name(input_specs_[i].dtype)));
      if (current_shape(api_.input_tensor(slot.interpreter, static_cast<int>(i))) == inputs[i].shape) continue;
      std::vector<int> dims(inputs[i].shape.begin(), inputs[i].shape.end());
      if (api_.resize_input(slot.interpreter, static_cast<int>(i), dims.data(), static_cast<int>(dims.size())) != kTfLiteOk)
        throw Error("tflite: input '" + name + "' cannot take shape " + format_shape(inputs[i].shape) + ": " +
                    slot.log.take("no reason given"));
      resized = true;
    }
    if (resized && api_.allocate_tensors(slot.interpreter) != kTfLiteOk)
      throw Error("tflite: cannot allocate tensors for the bound shapes: " + slot.log.take("no reason given"));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      TfLiteTensor* t = api_.input_tensor(slot.interpreter, static_cast<int>(i));
      if (api_.tensor_copy_from(t, inputs[i].data.data(), inputs[i].data.size()) != kTfLiteOk)
        throw Error("tflite: input '" + input_specs_[i].name + "' takes " + std::to_string(api_.tensor_byte_size(t)) +
                    " bytes, " + std::to_string(inputs[i].data.size()) + " were bound");
    }
  }

  const TfliteCApi& api_;
  SessionOptions options_;
  int threads_ = 1;
  bool xnnpack_ = true;
  int xnnpack_threads_ = 0;
  std::optional<int> xnnpack_pool_started_;  // threads the first slot's delegate started
  ErrorLog model_log_;                       // before model_, which reports into it while it is built
  std::unique_ptr<TfLiteModel, decltype(&TfLiteModelDelete)> model_;
  std::vector<std::unique_ptr<Slot>> slots_;  // after model_: interpreters die before their model
  std::vector<TensorSpec> input_specs_, output_specs_;
};

}  // namespace

std::map<std::string, std::vector<std::int64_t>> verified_input_signatures(const TfliteCApi& api,
                                                                           const std::filesystem::path& model) {
  ErrorLog log;
  std::unique_ptr<TfLiteModel, decltype(&TfLiteModelDelete)> read(
      api.model_create_from_file(model.string().c_str(), &ErrorLog::report, &log), api.model_delete);
  if (!read) throw Error("TfLite's flatbuffer verifier rejects the model: " + log.take("no reason given"));
  TfLiteInterpreterOptions* options = api.options_create();
  api.options_set_error_reporter(options, &ErrorLog::report, &log);
  std::unique_ptr<TfLiteInterpreter, decltype(&TfLiteInterpreterDelete)> interpreter(api.interpreter_create(read.get(), options),
                                                                                     api.interpreter_delete);
  api.options_delete(options);
  if (!interpreter) throw Error("TfLite cannot build an interpreter for the model: " + log.take("no reason given"));
  std::map<std::string, std::vector<std::int64_t>> signatures;
  for (int i = 0; i < api.input_count(interpreter.get()); ++i) {
    const TfLiteTensor* tensor = api.input_tensor(interpreter.get(), i);
    signatures[api.tensor_name(tensor)] = dims_of(api.tensor_dims_signature(tensor));
  }
  return signatures;
}

std::unique_ptr<Session> open_tflite_c_session(const TfliteCApi& api, const std::filesystem::path& model,
                                               const SessionOptions& options, bool xnnpack) {
  return std::make_unique<TfliteCSession>(api, model, options, xnnpack);
}

}  // namespace infermark

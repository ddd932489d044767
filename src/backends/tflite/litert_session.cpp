#include "backends/tflite/litert_session.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <type_traits>

#include "backends/options.hpp"
#include "backends/tflite/tflite_settings.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

namespace lrt = litert_2_3;

DType dtype_of(std::int32_t element_type, const std::string& tensor) {
  switch (static_cast<lrt::ElementType>(element_type)) {
    case lrt::ElementType::kFloat32:
      return DType::kFloat32;
    case lrt::ElementType::kFloat16:
      return DType::kFloat16;
    case lrt::ElementType::kInt8:
      return DType::kInt8;
    case lrt::ElementType::kUInt8:
      return DType::kUInt8;
    case lrt::ElementType::kInt16:
      return DType::kInt16;
    case lrt::ElementType::kInt32:
      return DType::kInt32;
    case lrt::ElementType::kInt64:
      return DType::kInt64;
    case lrt::ElementType::kBool:
      return DType::kBool;
  }
  throw Error("tensor '" + tensor + "' has LiteRT element type " + std::to_string(element_type) +
              ", which infermark cannot feed");
}

std::vector<std::int64_t> dims_of(const lrt::Layout& layout) {
  return std::vector<std::int64_t>(layout.dimensions, layout.dimensions + layout.rank);
}

std::string status_text(lrt::Status status) {
  switch (status) {
    case 1:
      return "kLiteRtStatusErrorInvalidArgument";
    case 3:
      return "kLiteRtStatusErrorRuntimeFailure";
    case 6:
      return "kLiteRtStatusErrorNotFound";
    case 500:
      return "kLiteRtStatusErrorFileIO";
    case 501:
      return "kLiteRtStatusErrorInvalidFlatbuffer";
    case 504:
      return "kLiteRtStatusErrorCompilation";
    default:
      return "LiteRT status " + std::to_string(status);
  }
}

// LiteRT reports only a status for a file it cannot read (its reason goes to its log): where the
// file lacks the TFLite flatbuffer identifier, say so.
std::string why_unreadable(const std::filesystem::path& model) {
  char header[8] = {};
  std::ifstream(model, std::ios::binary).read(header, sizeof header);
  const std::string identifier(header + 4, 4);
  if (identifier == "TFL3") return "";
  return " (not a TFLite Flatbuffer: its file identifier is not TFL3)";
}

class LiteRtSession final : public Session {
 public:
  LiteRtSession(const LiteRtCApi& api, const std::filesystem::path& model, const SessionOptions& options,
                const std::map<std::string, std::vector<std::int64_t>>& declared)
      : api_(api),
        options_(options),
        threads_(options.intra_op_threads > 0 ? options.intra_op_threads : 1),
        environment_(nullptr, api.destroy_environment),
        model_(nullptr, api.destroy_model) {
    lrt::Environment environment = nullptr;
    check(api_.create_environment(0, nullptr, &environment), "create a LiteRT environment");
    environment_.reset(environment);
    lrt::Model loaded = nullptr;
    const auto read = api_.create_model_from_file(environment, model.string().c_str(), &loaded);
    if (read != lrt::kStatusOk) throw Error("LiteRT cannot read the model: " + status_text(read) + why_unreadable(model));
    model_.reset(loaded);
    lrt::Signature signature = nullptr;
    check(api_.get_model_signature(loaded, 0, &signature), "find the model's first signature");
    lrt::ParamIndex inputs = 0, outputs = 0;
    check(api_.signature_input_count(signature, &inputs), "count the signature's inputs");
    check(api_.signature_output_count(signature, &outputs), "count the signature's outputs");
    for (lrt::ParamIndex i = 0; i < inputs; ++i) add_spec(signature, i, api_.signature_input_tensor, input_specs_, input_types_);
    for (lrt::ParamIndex i = 0; i < outputs; ++i)
      add_spec(signature, i, api_.signature_output_tensor, output_specs_, output_types_);
    for (auto& spec : input_specs_) {
      const auto found = declared.find(spec.name);
      if (found == declared.end() || found->second.size() != spec.shape.size()) continue;
      for (std::size_t d = 0; d < spec.shape.size(); ++d)
        if (found->second[d] < 0) spec.shape[d] = kDynamicDim;
    }
    slots_.push_back(make_slot());
  }

  // Fixed shapes only: a new shape means resizing and reallocating the compiled model's buffers.
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
    const auto status = api_.run(s.compiled, 0, s.inputs.size(), s.inputs.data(), s.outputs.size(), s.outputs.data());
    if (status != lrt::kStatusOk) throw Error("tflite: LiteRT run failed: " + messages(s.compiled, status));
  }
  int max_slots() const override { return 64; }

  std::vector<Tensor> outputs() override {
    const Slot& slot = *slots_.at(0);
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < slot.outputs.size(); ++i) {
      const auto& spec = output_specs_[i];
      Tensor tensor{spec.name, spec.dtype, dims_of(slot.output_types[i].layout), {}};
      tensor.data.resize(tensor.element_count() * dtype_size(spec.dtype));
      void* memory = nullptr;
      check(api_.lock_buffer(slot.outputs[i], &memory, lrt::kLockModeRead), "read output '" + spec.name + "'");
      std::memcpy(tensor.data.data(), memory, tensor.data.size());
      api_.unlock_buffer(slot.outputs[i]);
      result.push_back(std::move(tensor));
    }
    return result;
  }

  void overwrite_input(std::size_t index, std::span<const std::byte> data) override {
    for (auto& slot : slots_) {
      if (index >= slot->inputs.size() || slot->input_bytes[index] != data.size())
        throw Error("input " + std::to_string(index) + ": " + std::to_string(data.size()) + " bytes do not fit the bound input");
      if (!write(slot->inputs[index], data)) throw Error("input " + std::to_string(index) + ": LiteRT refused the write");
    }
  }

  std::string library_version() const override { return "ai-edge-litert " + api_.version; }

  std::vector<EffectiveSetting> effective_settings() const override {
    auto settings = tflite_settings::common(options_, tflite_settings::Runtime::kLiteRt);
    settings.push_back(
        {"runtime_api", "",
         "LiteRT's C API, CompiledModel on the CPU accelerator (ai-edge-litert " + api_.version + "'s libLiteRt.so)",
         SettingState::kVerified, "the library litert-benchmark runs; no Python in the timed call"});
    settings.push_back(threads_setting());
    const auto requested = options_.extras.find("xnnpack");
    settings.push_back({"xnnpack", requested == options_.extras.end() ? "" : requested->second, "on (LiteRT's CPU accelerator)",
                        SettingState::kUnverified,
                        "LiteRT's CPU accelerator runs the model through XNNPACK, as litert-benchmark does"});
    return settings;
  }

 private:
  // CPU options num_threads, as ai-edge-litert's CpuOptions(num_threads=...) sets it. LiteRT
  // cannot report it, but its XNNPACK pool starts with the compiled model (N - 1 workers beside
  // the calling thread), so counting those verifies the request.
  EffectiveSetting threads_setting() const {
    const int asked = options_.intra_op_threads;
    if (!pool_started_)
      return unverified_threads(asked,
                                std::to_string(threads_) + (asked > 0 ? "" : " (litert-benchmark's default, --num_threads=1)"),
                                "/proc/self/task cannot be read to count XNNPACK's pool; LiteRT cannot report it");
    const std::string default_note = asked > 0 ? "" : "; litert-benchmark's default is 1";
    return counted_pool_threads(asked, *pool_started_, "compiling the model", default_note);
  }

  // One compiled model with its tensor buffers and their types.
  struct Slot {
    const LiteRtCApi& api;
    lrt::CompiledModel compiled = nullptr;
    std::vector<lrt::TensorBuffer> inputs, outputs;
    std::vector<lrt::RankedTensorType> input_types, output_types;
    std::vector<std::size_t> input_bytes;
    explicit Slot(const LiteRtCApi& a) : api(a) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      release_buffers();
      if (compiled != nullptr) api.destroy_compiled_model(compiled);
    }
    void release_buffers() {
      for (auto buffer : inputs) api.destroy_buffer(buffer);
      for (auto buffer : outputs) api.destroy_buffer(buffer);
      inputs.clear();
      outputs.clear();
    }
  };

  void check(lrt::Status status, const std::string& what) const {
    if (status != lrt::kStatusOk) throw Error("LiteRT cannot " + what + ": " + status_text(status));
  }

  std::string messages(lrt::CompiledModel compiled, lrt::Status status) const {
    char* text = nullptr;
    std::string result = status_text(status);
    if (api_.error_messages(compiled, &text) == lrt::kStatusOk && text != nullptr) {
      if (*text != '\0') result += ": " + std::string(text);
      std::free(text);
    }
    return result;
  }

  void add_spec(lrt::Signature signature, lrt::ParamIndex index, lrt::GetSignatureTensorByIndex get,
                std::vector<TensorSpec>& specs, std::vector<lrt::RankedTensorType>& types) {
    lrt::Tensor tensor = nullptr;
    check(get(signature, index, &tensor), "find signature tensor " + std::to_string(index));
    const char* name = nullptr;
    check(api_.tensor_name(tensor, &name), "name signature tensor " + std::to_string(index));
    int type_id = -1;
    check(api_.tensor_type_id(tensor, &type_id), "type tensor '" + std::string(name) + "'");
    if (type_id != lrt::kRankedTensorType)
      throw Error("tensor '" + std::string(name) + "' has no rank; infermark feeds ranked tensors only");
    lrt::RankedTensorType type{};
    check(api_.ranked_tensor_type(tensor, &type), "type tensor '" + std::string(name) + "'");
    TensorSpec spec;
    spec.name = name;
    spec.dtype = dtype_of(type.element_type, spec.name);
    spec.shape = dims_of(type.layout);  // -1 where the model allows any size
    spec.dim_names.resize(spec.shape.size());
    specs.push_back(std::move(spec));
    types.push_back(type);
  }

  std::unique_ptr<Slot> make_slot() {
    auto slot = std::make_unique<Slot>(api_);
    lrt::Options options = nullptr;
    check(api_.create_options(&options), "create compilation options");
    std::unique_ptr<std::remove_pointer_t<lrt::Options>, lrt::DestroyOptions> owned(options, api_.destroy_options);
    check(api_.set_hardware_accelerators(options, lrt::kHwAcceleratorCpu), "select the CPU accelerator");
    const std::string toml = "num_threads = " + std::to_string(threads_) + "\n";
    char* payload = new char[toml.size() + 1];
    std::memcpy(payload, toml.c_str(), toml.size() + 1);
    lrt::OpaqueOptions cpu = nullptr;
    const auto created = api_.create_opaque_options(
        lrt::kCpuOptionsIdentifier, payload, [](void* p) { delete[] static_cast<char*>(p); }, &cpu);
    if (created != lrt::kStatusOk) delete[] payload;
    check(created, "create CPU options");
    check(api_.add_opaque_options(options, cpu), "add CPU options");  // the options own them now
    lrt::Status compiled = lrt::kStatusOk;
    const auto started = threads_started_by(
        [&] { compiled = api_.create_compiled_model(environment_.get(), model_.get(), options, &slot->compiled); });
    check(compiled, "compile the model for the CPU");
    if (slots_.empty()) pool_started_ = started;  // the first slot's pool is the one reported
    return slot;
  }

  bool write(lrt::TensorBuffer buffer, std::span<const std::byte> data) const {
    void* memory = nullptr;
    if (api_.lock_buffer(buffer, &memory, lrt::kLockModeWrite) != lrt::kStatusOk) return false;
    std::memcpy(memory, data.data(), data.size());
    api_.unlock_buffer(buffer);
    return true;
  }

  // Resizes the compiled model's inputs to the bound shapes where they differ, makes buffers for
  // the current shapes from the compiled model's requirements, then writes the data.
  void bind(Slot& slot, const std::vector<Tensor>& inputs) {
    if (slot.input_types.empty()) {
      slot.input_types = input_types_;
      slot.output_types = output_types_;
    }
    bool resized = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& name = input_specs_[i].name;
      if (inputs[i].dtype != input_specs_[i].dtype)
        throw Error("tflite: input '" + name + "' is " + std::string(dtype_name(input_specs_[i].dtype)));
      if (dims_of(slot.input_types[i].layout) == inputs[i].shape) continue;
      if (inputs[i].shape.size() > static_cast<std::size_t>(lrt::kMaxRank))
        throw Error("tflite: input '" + name + "' has more than 8 dimensions");
      std::vector<int> dims(inputs[i].shape.begin(), inputs[i].shape.end());
      check(api_.resize_input(slot.compiled, 0, i, dims.data(), dims.size()),
            "give input '" + name + "' shape " + format_shape(inputs[i].shape));
      auto& layout = slot.input_types[i].layout;
      layout.rank = static_cast<std::uint32_t>(dims.size()) & 0x7f;
      for (std::size_t d = 0; d < dims.size(); ++d) layout.dimensions[d] = dims[d];
      resized = true;
    }
    if (resized || slot.outputs.empty()) {
      std::vector<lrt::Layout> layouts(slot.output_types.size());
      check(api_.output_layouts(slot.compiled, 0, layouts.size(), layouts.data(), true), "work out the output shapes");
      for (std::size_t i = 0; i < layouts.size(); ++i) slot.output_types[i].layout = layouts[i];
      slot.release_buffers();
      slot.input_bytes.clear();
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        lrt::TensorBufferRequirements requirements = nullptr;  // owned by the compiled model
        check(api_.input_requirements(slot.compiled, 0, i, &requirements),
              "find input '" + input_specs_[i].name + "''s buffer requirements");
        slot.inputs.push_back(nullptr);
        check(api_.create_buffer(environment_.get(), &slot.input_types[i], requirements, &slot.inputs.back()),
              "make a buffer for input '" + input_specs_[i].name + "'");
        slot.input_bytes.push_back(inputs[i].data.size());
      }
      for (std::size_t i = 0; i < slot.output_types.size(); ++i) {
        lrt::TensorBufferRequirements requirements = nullptr;
        check(api_.output_requirements(slot.compiled, 0, i, &requirements),
              "find output '" + output_specs_[i].name + "''s buffer requirements");
        slot.outputs.push_back(nullptr);
        check(api_.create_buffer(environment_.get(), &slot.output_types[i], requirements, &slot.outputs.back()),
              "make a buffer for output '" + output_specs_[i].name + "'");
      }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      std::size_t capacity = 0;
      check(api_.buffer_size(slot.inputs[i], &capacity), "size input '" + input_specs_[i].name + "''s buffer");
      if (inputs[i].data.size() > capacity || !write(slot.inputs[i], inputs[i].data))
        throw Error("tflite: input '" + input_specs_[i].name + "' takes " + std::to_string(capacity) + " bytes, " +
                    std::to_string(inputs[i].data.size()) + " were bound");
      slot.input_bytes[i] = inputs[i].data.size();
    }
  }

  const LiteRtCApi& api_;
  SessionOptions options_;
  int threads_ = 1;
  std::optional<int> pool_started_;  // threads the first slot's compiled model started
  std::unique_ptr<std::remove_pointer_t<lrt::Environment>, lrt::DestroyEnvironment> environment_;
  std::unique_ptr<std::remove_pointer_t<lrt::Model>, lrt::DestroyModel> model_;
  std::vector<TensorSpec> input_specs_, output_specs_;
  std::vector<lrt::RankedTensorType> input_types_, output_types_;  // as the model declares them
  std::vector<std::unique_ptr<Slot>> slots_;  // last: compiled models and buffers die before the model and environment
};

}  // namespace

std::unique_ptr<Session> open_litert_session(const LiteRtCApi& api, const std::filesystem::path& model,
                                             const SessionOptions& options,
                                             const std::map<std::string, std::vector<std::int64_t>>& declared) {
  return std::make_unique<LiteRtSession>(api, model, options, declared);
}

}  // namespace infermark

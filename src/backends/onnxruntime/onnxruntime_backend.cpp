// ONNX Runtime backend (C++ API): CPU execution provider, inputs and outputs bound once through
// IoBinding with preallocated output buffers, so a timed run() is Session::Run and nothing else.
#include <onnxruntime_cxx_api.h>

#include <cstring>
#include <optional>
#include <thread>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "onnxruntime";

const std::vector<OptionDoc> kOptions{
    {"graph_optimization", "disable|basic|extended|all", "all", "graph optimisation level"},
    {"execution_mode", "sequential|parallel", "sequential", "parallel runs independent branches on inter-op threads"},
    {"spinning", "on|off", "on", "intra-op threads spin while waiting for work"},
    {"memory_arena", "on|off", "on", "CPU memory arena"},
    {"memory_pattern", "on|off", "on", "memory pattern planning (static shapes)"},
    {"profile", "on|off", "off", "ORT's per-operator profiler, saved beside the result (timings then include its overhead)"}};

DType to_dtype(ONNXTensorElementDataType type, const std::string& tensor) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
      return DType::kFloat32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return DType::kFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
      return DType::kBFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      return DType::kFloat64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
      return DType::kInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
      return DType::kUInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
      return DType::kInt16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      return DType::kInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
      return DType::kInt64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
      return DType::kBool;
    default:
      throw Error("tensor '" + tensor + "' has ONNX element type " + std::to_string(type) + ", which infermark cannot feed");
  }
}

ONNXTensorElementDataType to_onnx(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case DType::kFloat16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case DType::kBFloat16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    case DType::kFloat64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case DType::kInt8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case DType::kUInt8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case DType::kInt16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case DType::kInt32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case DType::kInt64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case DType::kBool:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

TensorSpec to_spec(const std::string& name, const Ort::TypeInfo& type_info) {
  if (type_info.GetONNXType() != ONNX_TYPE_TENSOR)
    throw Error("'" + name + "' is not a tensor (sequences and maps are not supported)");
  auto info = type_info.GetTensorTypeAndShapeInfo();
  TensorSpec spec{name, to_dtype(info.GetElementType(), name), info.GetShape(), {}};
  for (const char* dim : info.GetSymbolicDimensions()) spec.dim_names.emplace_back(dim ? dim : "");
  spec.dim_names.resize(spec.shape.size());
  return spec;
}

Ort::Env& shared_env() {
  static Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "infermark");
  return env;
}

GraphOptimizationLevel parse_graph_optimization(const std::string& value) {
  if (value == "disable") return ORT_DISABLE_ALL;
  if (value == "basic") return ORT_ENABLE_BASIC;
  if (value == "extended") return ORT_ENABLE_EXTENDED;
  if (value == "all") return ORT_ENABLE_ALL;
  throw Error("--opt graph_optimization=" + value + ": backend 'onnxruntime' expects disable, basic, extended or all");
}

ExecutionMode parse_execution_mode(const std::string& value) {
  if (value == "sequential") return ORT_SEQUENTIAL;
  if (value == "parallel") return ORT_PARALLEL;
  throw Error("--opt execution_mode=" + value + ": backend 'onnxruntime' expects sequential or parallel");
}

// ONNX Runtime's API cannot report its intra-op pool size, but the pool starts with the session:
// N - 1 workers beside the calling thread (none for 1). Counting the threads the session started
// verifies the request, and shows what the framework default came to.
EffectiveSetting intra_op_threads_setting(int requested, const std::string& execution_mode, std::optional<int> started) {
  const std::string configured = requested > 0 ? std::to_string(requested) : "framework default (one per physical core)";
  const std::string no_getter = "ONNX Runtime's API cannot report the pool size";
  if (execution_mode == "parallel")
    return unverified_threads(requested, configured,
                              "execution_mode=parallel starts the inter-op pool too, so the threads the session started "
                              "cannot be told apart; " +
                                  no_getter);
  if (!started)
    return unverified_threads(requested, configured, "/proc/self/task cannot be read to count the pool; " + no_getter);
  return counted_pool_threads(requested, *started, "the session");
}

class OnnxRuntimeSession final : public Session {
 public:
  OnnxRuntimeSession(const std::filesystem::path& model, const SessionOptions& options) {
    check_option_keys(kName, options.extras, kOptions);
    const auto graph_optimization = option_or(options.extras, "graph_optimization", "all");
    const auto execution_mode = option_or(options.extras, "execution_mode", "sequential");
    const bool spinning = parse_bool_option(kName, "spinning", option_or(options.extras, "spinning", "on"));
    const bool arena = parse_bool_option(kName, "memory_arena", option_or(options.extras, "memory_arena", "on"));
    const bool pattern = parse_bool_option(kName, "memory_pattern", option_or(options.extras, "memory_pattern", "on"));
    profiling_ = parse_bool_option(kName, "profile", option_or(options.extras, "profile", "off"));
    if (profiling_ && options.artifacts_dir.empty()) throw Error("--opt profile=on: no folder to save ORT's profile in");

    Ort::SessionOptions so;
    so.SetGraphOptimizationLevel(parse_graph_optimization(graph_optimization));
    so.SetExecutionMode(parse_execution_mode(execution_mode));
    if (options.intra_op_threads > 0) so.SetIntraOpNumThreads(options.intra_op_threads);
    if (options.inter_op_threads > 0) so.SetInterOpNumThreads(options.inter_op_threads);
    so.AddConfigEntry("session.intra_op.allow_spinning", spinning ? "1" : "0");
    arena ? so.EnableCpuMemArena() : so.DisableCpuMemArena();
    pattern ? so.EnableMemPattern() : so.DisableMemPattern();
    const auto profile_prefix = options.artifacts_dir + "/onnxruntime_profile";
    if (profiling_) so.EnableProfiling(profile_prefix.c_str());
    auto& env = shared_env();  // before counting: the environment is not the session's pool
    const auto started = threads_started_by([&] { session_.emplace(env, model.c_str(), so); });

    Ort::AllocatorWithDefaultOptions allocator;
    for (std::size_t i = 0; i < session_->GetInputCount(); ++i)
      inputs_.push_back(to_spec(session_->GetInputNameAllocated(i, allocator).get(), session_->GetInputTypeInfo(i)));
    for (std::size_t i = 0; i < session_->GetOutputCount(); ++i)
      outputs_.push_back(to_spec(session_->GetOutputNameAllocated(i, allocator).get(), session_->GetOutputTypeInfo(i)));

    const auto threads = [](int n) { return n > 0 ? std::to_string(n) : std::string(); };
    const auto unverified = SettingState::kUnverified;  // restated as configured: the session cannot report them
    settings_ = {
        intra_op_threads_setting(options.intra_op_threads, execution_mode, started),
        {"inter_op_threads", threads(options.inter_op_threads),
         options.inter_op_threads > 0 ? threads(options.inter_op_threads) : "framework default", unverified,
         execution_mode == "sequential" ? "only used with execution_mode=parallel" : ""},
        {"graph_optimization", option_or(options.extras, "graph_optimization", ""), graph_optimization, unverified, ""},
        {"execution_mode", option_or(options.extras, "execution_mode", ""), execution_mode, unverified, ""},
        {"spinning", option_or(options.extras, "spinning", ""), spinning ? "on" : "off", unverified, ""},
        {"memory_arena", option_or(options.extras, "memory_arena", ""), arena ? "on" : "off", unverified, ""},
        {"memory_pattern", option_or(options.extras, "memory_pattern", ""), pattern ? "on" : "off", unverified, ""},
        {"execution_provider", options.device, "CPUExecutionProvider", configured_state(options.device == "cpu"),
         options.device == "cpu" ? "" : "only the CPU provider is in this build"},
        {"precision", options.precision, "as stored in the model", configured_state(options.precision == "fp32"),
         options.precision == "fp32" ? ""
                                     : "ONNX Runtime runs the model's own precision; export a reduced-precision model instead"},
        {"profile", option_or(options.extras, "profile", ""),
         profiling_ ? profile_prefix + "_<time>.json, written when the session closes (timings include its overhead)" : "off",
         unverified, ""},
        {"io_binding", "", "inputs and outputs preallocated and bound once", unverified,
         "binding runs one inference to learn the output shapes, so timing.first_inference is the second run"},
    };
  }

  ~OnnxRuntimeSession() override {
    if (!profiling_ || !session_) return;
    Ort::AllocatorWithDefaultOptions allocator;
    session_->EndProfilingAllocated(allocator);  // writes the profile file
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = true, .varying_shapes = true}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots < 1 || slots > max_slots()) throw Error("onnxruntime: " + std::to_string(slots) + " request slots requested");
    bound_inputs_ = inputs;  // ORT tensors below point into these buffers
    input_values_.clear();
    for (auto& tensor : bound_inputs_)
      input_values_.push_back(Ort::Value::CreateTensor(cpu_memory_, tensor.data.data(), tensor.data.size(), tensor.shape.data(),
                                                       tensor.shape.size(), to_onnx(tensor.dtype)));
    slots_.clear();
    slots_.reserve(static_cast<std::size_t>(slots));
    for (int i = 0; i < slots; ++i) slots_.push_back(bind_slot(bound_inputs_, input_values_));
  }

  // Varying shapes: one binding per (set, slot), each with outputs preallocated for its shapes.
  void set_input_sets(const std::vector<std::vector<Tensor>>& sets, int slots, bool few_shapes) override {
    if (slots < 1 || slots > max_slots()) throw Error("onnxruntime: " + std::to_string(slots) + " request slots requested");
    input_sets_ = sets;
    set_values_.clear();
    set_slots_.clear();
    for (auto& set : input_sets_) {
      auto& values = set_values_.emplace_back();
      for (auto& tensor : set)
        values.push_back(Ort::Value::CreateTensor(cpu_memory_, tensor.data.data(), tensor.data.size(), tensor.shape.data(),
                                                  tensor.shape.size(), to_onnx(tensor.dtype)));
    }
    for (std::size_t s = 0; s < input_sets_.size(); ++s) {
      auto& per_slot = set_slots_.emplace_back();
      for (int i = 0; i < slots; ++i) per_slot.push_back(bind_slot(input_sets_[s], set_values_[s]));
    }
    settings_.push_back({"shape_preparation", few_shapes ? "each bucketed shape" : "", "one session for every shape",
                         configured_state(!few_shapes),
                         few_shapes ? "ONNX Runtime has no per-shape preparation; each shape runs the one session" : ""});
  }

  void run_set(int slot, std::size_t set) override {
    session_->Run(run_options_, set_slots_[set][static_cast<std::size_t>(slot)].binding);
    if (slot == 0) last_set_ = set;
  }

  // Session::Run is thread-safe; each slot has its own binding and output buffers.
  void run(int slot) override { session_->Run(run_options_, slots_[static_cast<std::size_t>(slot)].binding); }
  int max_slots() const override { return 1024; }

  void overwrite_input(std::size_t index, std::span<const std::byte> data) override {
    overwrite_data(bound_inputs_.at(index), data);  // every slot's ORT value points into this buffer
  }

  std::vector<Tensor> outputs() override {
    return copy_outputs(set_slots_.empty() ? slots_.at(0).outputs : set_slots_.at(last_set_).at(0).outputs);
  }

  // Serving: the request's buffers wrapped as they are and one Run with ORT-allocated outputs
  // (binding would run the model twice to learn the output shapes).
  std::vector<Tensor> infer(const std::vector<Tensor>& inputs) override {
    std::vector<Ort::Value> values;
    std::vector<const char*> input_names, output_names;
    for (const auto& tensor : inputs) {
      values.push_back(Ort::Value::CreateTensor(cpu_memory_, const_cast<std::byte*>(tensor.data.data()), tensor.data.size(),
                                                tensor.shape.data(), tensor.shape.size(), to_onnx(tensor.dtype)));
      input_names.push_back(tensor.name.c_str());
    }
    for (const auto& spec : outputs_) output_names.push_back(spec.name.c_str());
    return copy_outputs(
        session_->Run(run_options_, input_names.data(), values.data(), values.size(), output_names.data(), output_names.size()));
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  std::vector<Tensor> copy_outputs(const std::vector<Ort::Value>& values) const {
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto info = values[i].GetTensorTypeAndShapeInfo();
      Tensor tensor{outputs_[i].name, to_dtype(info.GetElementType(), outputs_[i].name), info.GetShape(), {}};
      tensor.data.resize(tensor.element_count() * dtype_size(tensor.dtype));
      std::memcpy(tensor.data.data(), values[i].GetTensorRawData(), tensor.data.size());
      result.push_back(std::move(tensor));
    }
    return result;
  }

  Ort::MemoryInfo cpu_memory_ = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  Ort::RunOptions run_options_;
  std::optional<Ort::Session> session_;
  struct Slot {
    Ort::IoBinding binding;
    std::vector<Ort::Value> outputs;
  };
  // One run with ORT-allocated outputs tells the output shapes; then outputs are preallocated
  // and bound, so timed runs allocate nothing.
  Slot bind_slot(const std::vector<Tensor>& inputs, std::vector<Ort::Value>& values) {
    Slot slot{Ort::IoBinding(*session_), {}};
    for (std::size_t i = 0; i < inputs.size(); ++i) slot.binding.BindInput(inputs[i].name.c_str(), values[i]);
    for (const auto& spec : outputs_) slot.binding.BindOutput(spec.name.c_str(), cpu_memory_);
    session_->Run(run_options_, slot.binding);
    auto produced = slot.binding.GetOutputValues();
    slot.binding.ClearBoundOutputs();
    Ort::AllocatorWithDefaultOptions allocator;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      auto info = produced[i].GetTensorTypeAndShapeInfo();
      auto shape = info.GetShape();
      slot.outputs.push_back(Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), info.GetElementType()));
      slot.binding.BindOutput(outputs_[i].name.c_str(), slot.outputs.back());
    }
    return slot;
  }

  std::vector<Slot> slots_;
  bool profiling_ = false;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<Tensor> bound_inputs_;
  std::vector<Ort::Value> input_values_;
  std::vector<std::vector<Tensor>> input_sets_;  // varying shapes: every input set
  std::vector<std::vector<Ort::Value>> set_values_;
  std::vector<std::vector<Slot>> set_slots_;  // [set][slot]
  std::size_t last_set_ = 0;                  // the set slot 0 ran last
  std::vector<EffectiveSetting> settings_;
};

class OnnxRuntimeBackend final : public Backend {
 public:
  BackendInfo info() const override {
    std::string providers;
    for (const auto& p : Ort::GetAvailableProviders()) providers += (providers.empty() ? "" : ", ") + p;
    return declared_backend_info(
        kName, Ort::GetVersionString(), {"cpu"},
        "prebuilt library from the npm package onnxruntime-node, C++ API; execution providers in this build: " + providers,
        kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = false}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    try {
      return std::make_unique<OnnxRuntimeSession>(model, options);
    } catch (const Ort::Exception& e) {
      throw Error("cannot load " + model.string() + ": " + e.what());
    }
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::OnnxRuntimeBackend)

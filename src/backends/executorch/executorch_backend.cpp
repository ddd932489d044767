// ExecuTorch backend: PyTorch's on-device runtime, from the libraries and headers PyPI's
// executorch wheel ships, running the .pte programs the zoo exports (torch.export, lowered to the
// XNNPACK delegate; INT8 through the XNNPACK quantizer). The runtime's own C++ API, as ExecuTorch's
// executor_runner uses it: a Program loaded from the file, its "forward" Method with the memory
// the exporter planned, inputs set and the method executed per timed call.
//
// A .pte carries shapes and dtypes but no tensor names: the zoo's manifest beside the model
// (core/model_manifest.hpp) names them, so results name tensors as the ONNX original does and
// cross-check against it. A Method is not safe to use from several threads (max_slots 1).
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/tensor/tensor_ptr_maker.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/executorch/executorch_threadpool.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "core/model_manifest.hpp"

namespace infermark {
namespace {

namespace et = ::executorch::runtime;
using ScalarType = ::executorch::aten::ScalarType;

constexpr const char* kName = "executorch";
constexpr const char* kMethod = "forward";  // what torch.export names the exported module's call

std::string describe(et::Error error) {
  return std::string(et::to_string(error)) + " (" + std::to_string(static_cast<int>(error)) + ")";
}

void check(et::Error error, const std::string& what) {
  if (error != et::Error::Ok) throw Error(what + ": ExecuTorch error " + describe(error));
}

template <typename T>
T take(et::Result<T>&& result, const std::string& what) {
  if (!result.ok()) throw Error(what + ": ExecuTorch error " + describe(result.error()));
  return std::move(result.get());
}

std::optional<DType> dtype_of(ScalarType type) {
  switch (type) {
    case ScalarType::Float:
      return DType::kFloat32;
    case ScalarType::Long:
      return DType::kInt64;
    case ScalarType::Int:
      return DType::kInt32;
    case ScalarType::Byte:
      return DType::kUInt8;
    case ScalarType::Char:
      return DType::kInt8;
    case ScalarType::Bool:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

ScalarType scalar_type_of(DType dtype) {
  for (const auto type :
       {ScalarType::Float, ScalarType::Long, ScalarType::Int, ScalarType::Byte, ScalarType::Char, ScalarType::Bool})
    if (dtype_of(type) == dtype) return type;
  throw Error(std::string("ExecuTorch inputs of dtype ") + std::string(dtype_name(dtype)) + " are not supported by this backend");
}

// PAL initialisation, once per process, before the first program.
void initialise_runtime() {
  static std::once_flag once;
  std::call_once(once, [] { et::runtime_init(); });
}

// The process's ExecuTorch thread pool (the XNNPACK delegate's workers) at `requested` threads,
// and the count it reports afterwards. 0 keeps the pool's own default (one per core cpuinfo finds).
EffectiveSetting apply_threads(int requested) {
  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  if (!pool) return unverified_threads(requested, "", "ExecuTorch has no thread pool in this process");
  if (requested > 0 && !pool->_unsafe_reset_threadpool(static_cast<std::uint32_t>(requested)))
    throw Error("ExecuTorch could not resize its thread pool to " + std::to_string(requested) + " threads");
  return observed_threads(requested, static_cast<int>(pool->get_thread_count()),
                          "threadpool::get_threadpool()->get_thread_count()");
}

EffectiveSetting precision_setting(const std::string& requested) {
  if (requested == "fp32")
    return {"precision", requested, "as the program's weights", SettingState::kVerified,
            "ExecuTorch computes in the precision the program was exported with (the zoo's .pte: FP32, or INT8 in *_int8.pte)"};
  return {"precision", requested, "as the program's weights", SettingState::kNotApplied,
          "an ExecuTorch program's precision is fixed when it is exported (the zoo's *_int8.pte for INT8); this session runs the "
          "file as it is"};
}

class ExecutorchSession final : public Session {
 public:
  ExecutorchSession(const std::filesystem::path& model, const SessionOptions& options) : model_(model) {
    check_option_keys(kName, options.extras, {});
    if (options.device != "cpu") throw Error("--device " + options.device + ": backend 'executorch' is built for the CPU only");
    initialise_runtime();
    const auto where = "cannot load " + model.string();
    loader_ = std::make_unique<::executorch::extension::FileDataLoader>(
        take(::executorch::extension::FileDataLoader::from(model.string().c_str()), where));
    program_ =
        std::make_unique<et::Program>(take(et::Program::load(loader_.get(), et::Program::Verification::InternalConsistency),
                                           where + ": not an ExecuTorch program, or one this runtime cannot read"));
    const auto meta = take(program_->method_meta(kMethod), where + ": the program has no '" + std::string(kMethod) + "' method");
    // The memory the exporter planned, one buffer per planned id, owned by the session.
    for (std::size_t id = 0; id < meta.num_memory_planned_buffers(); ++id)
      planned_.emplace_back(static_cast<std::size_t>(take(meta.memory_planned_buffer_size(id), where)));
    for (auto& buffer : planned_) planned_spans_.emplace_back(buffer.data(), buffer.size());
    planned_allocator_ = std::make_unique<et::HierarchicalAllocator>(
        et::Span<et::Span<std::uint8_t>>(planned_spans_.data(), planned_spans_.size()));
    memory_ = std::make_unique<et::MemoryManager>(&method_allocator_, planned_allocator_.get(), &temp_allocator_);
    settings_.push_back(apply_threads(options.intra_op_threads));
    method_ = std::make_unique<et::Method>(take(program_->load_method(kMethod, memory_.get()), where + ": loading its method"));
    read_specs(meta);
    settings_.push_back(precision_setting(options.precision));
    settings_.push_back(no_inter_op_threads(
        options.inter_op_threads, "ExecuTorch executes a method's instructions in order; it has no inter-op thread setting"));
    settings_.push_back(
        {"device", options.device, "CPU (XNNPACK delegate and ExecuTorch's CPU kernels)", SettingState::kVerified, ""});
    settings_.push_back(
        {"input_copy", "", "in each timed call", SettingState::kVerified,
         "the program's inputs live in the memory its exporter planned, which later operators may reuse: each run "
         "sets the bound inputs (Method::set_input copies them in) before Method::execute"});
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = false, .varying_shapes = false}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }
  int max_slots() const override { return 1; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots != 1) throw Error("executorch: an ExecuTorch method serves one request at a time");
    if (inputs.size() != inputs_.size())
      throw Error("executorch: the program takes " + std::to_string(inputs_.size()) + " inputs, " +
                  std::to_string(inputs.size()) + " given");
    bound_.clear();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& tensor = inputs[i];
      auto& bound = bound_.emplace_back(BoundInput{tensor.data, {}});
      std::vector<::executorch::aten::SizesType> sizes(tensor.shape.begin(), tensor.shape.end());
      bound.tensor = ::executorch::extension::from_blob(bound.bytes.data(), sizes, scalar_type_of(tensor.dtype));
      // Once here, so a shape the program cannot take fails when bound, naming the input.
      check(method_->set_input(et::EValue(*bound.tensor), i),
            "executorch: input '" + tensor.name + "' " + format_shape(tensor.shape) + " does not fit the program's input " +
                std::to_string(i) + " (its shape bounds were fixed at export)");
    }
  }

  void run(int /*slot*/) override {
    for (std::size_t i = 0; i < bound_.size(); ++i)
      check(method_->set_input(et::EValue(*bound_[i].tensor), i), "executorch: setting input " + std::to_string(i));
    check(method_->execute(), "ExecuTorch inference failed");
  }

  std::vector<Tensor> outputs() override {
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const auto& value = method_->get_output(i);
      if (!value.isTensor()) throw Error("ExecuTorch's output " + std::to_string(i) + " is not a tensor");
      const auto& out = value.toTensor();
      const auto dtype = dtype_of(out.scalar_type());
      if (!dtype) throw Error("ExecuTorch's output '" + outputs_[i].name + "' has a dtype this backend does not read");
      Tensor tensor{outputs_[i].name, *dtype, {out.sizes().begin(), out.sizes().end()}, {}};
      tensor.data.resize(out.nbytes());
      std::memcpy(tensor.data.data(), out.const_data_ptr(), tensor.data.size());
      result.push_back(std::move(tensor));
    }
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  // Names from the zoo's manifest (a .pte has none), checked against the program's own count,
  // dtypes and ranks; without a manifest, input_0.. and output_0.. with the program's shapes.
  void read_specs(const et::MethodMeta& meta) {
    const auto from_program = [&](std::size_t count, auto tensor_meta, const std::string& prefix) {
      std::vector<TensorSpec> specs;
      for (std::size_t i = 0; i < count; ++i) {
        const auto info =
            take(tensor_meta(i), "cannot load " + model_.string() + ": reading " + prefix + " " + std::to_string(i));
        const auto dtype = dtype_of(info.scalar_type());
        if (!dtype)
          throw Error("cannot load " + model_.string() + ": its " + prefix + " " + std::to_string(i) +
                      " has a dtype this backend does not support");
        specs.push_back({prefix + "_" + std::to_string(i), *dtype, {info.sizes().begin(), info.sizes().end()}, {}});
      }
      return specs;
    };
    const auto program_inputs = from_program(
        meta.num_inputs(), [&](std::size_t i) { return meta.input_tensor_meta(i); }, "input");
    const auto program_outputs = from_program(
        meta.num_outputs(), [&](std::size_t i) { return meta.output_tensor_meta(i); }, "output");
    inputs_ = read_manifest_tensors(model_, "inputs");
    outputs_ = read_manifest_tensors(model_, "outputs");
    if (inputs_.empty()) inputs_ = program_inputs;
    if (outputs_.empty()) outputs_ = program_outputs;
    agree(inputs_, program_inputs, "inputs");
    agree(outputs_, program_outputs, "outputs");
  }

  void agree(const std::vector<TensorSpec>& declared, const std::vector<TensorSpec>& program, const std::string& which) const {
    const auto where = "cannot load " + model_.string() + ": ";
    if (declared.size() != program.size())
      throw Error(where + "the program has " + std::to_string(program.size()) + " " + which + ", " +
                  manifest_path(model_).string() + " declares " + std::to_string(declared.size()));
    for (std::size_t i = 0; i < declared.size(); ++i) {
      if (declared[i].dtype != program[i].dtype || declared[i].shape.size() != program[i].shape.size())
        throw Error(where + "the program's " + which + " " + std::to_string(i) + " is " +
                    std::string(dtype_name(program[i].dtype)) + " " + format_shape(program[i].shape) + ", " +
                    manifest_path(model_).string() + " declares '" + declared[i].name + "' as " +
                    std::string(dtype_name(declared[i].dtype)) + " " + format_shape(declared[i].shape));
    }
  }

  struct BoundInput {
    std::vector<std::byte> bytes;               // the input's data, which the tensor views
    ::executorch::extension::TensorPtr tensor;  // over `bytes`
  };

  std::filesystem::path model_;
  std::unique_ptr<::executorch::extension::FileDataLoader> loader_;
  std::unique_ptr<et::Program> program_;  // reads through loader_
  std::vector<std::vector<std::uint8_t>> planned_;
  std::vector<et::Span<std::uint8_t>> planned_spans_;
  std::unique_ptr<et::HierarchicalAllocator> planned_allocator_;
  ::executorch::extension::MallocMemoryAllocator method_allocator_, temp_allocator_;
  std::unique_ptr<et::MemoryManager> memory_;
  std::unique_ptr<et::Method> method_;  // uses program_ and memory_
  std::vector<BoundInput> bound_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<EffectiveSetting> settings_;
};

class ExecutorchBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(
        kName, INFERMARK_EXECUTORCH_VERSION, {"cpu"},
        "ExecuTorch runtime from PyPI's executorch wheel (XNNPACK delegate, optimized and quantized CPU kernels)", {});
  }
  BackendCapabilities capabilities() const override { return {}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<ExecutorchSession>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::ExecutorchBackend)

// LibTorch / TorchScript backend: loads a scripted or traced module, runs it under
// InferenceMode, optionally frozen and optimised for inference. TorchScript files carry no input
// shapes, so the model's zoo manifest (<model>.json) declares them. LibTorch's heavy headers stay
// in this one translation unit.
#include <ATen/Parallel.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/script.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <regex>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "core/model_manifest.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "libtorch";

// Off by default: with Debian's LibTorch 1.13 on ResNet-50 (2 threads) a frozen module ran ~25x
// slower (2.1 s vs 81 ms P50) and frozen + optimised ~9x slower (0.93 s) than the plain module.
const std::vector<OptionDoc> kOptions{{"freeze", "on|off", "off", "torch::jit::freeze: inline parameters and fold constants"},
                                      {"optimize_for_inference", "on|off", "off",
                                       "torch::jit::optimize_for_inference after freeze (conv-bn folding, MKLDNN where built)"}};

c10::ScalarType to_torch(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return torch::kFloat32;
    case DType::kFloat16:
      return torch::kFloat16;
    case DType::kBFloat16:
      return torch::kBFloat16;
    case DType::kFloat64:
      return torch::kFloat64;
    case DType::kInt8:
      return torch::kInt8;
    case DType::kUInt8:
      return torch::kUInt8;
    case DType::kInt16:
      return torch::kInt16;
    case DType::kInt32:
      return torch::kInt32;
    case DType::kInt64:
      return torch::kInt64;
    case DType::kBool:
      return torch::kBool;
  }
  return torch::kFloat32;
}

DType from_torch(c10::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return DType::kFloat32;
    case torch::kFloat16:
      return DType::kFloat16;
    case torch::kBFloat16:
      return DType::kBFloat16;
    case torch::kFloat64:
      return DType::kFloat64;
    case torch::kInt8:
      return DType::kInt8;
    case torch::kUInt8:
      return DType::kUInt8;
    case torch::kInt16:
      return DType::kInt16;
    case torch::kInt32:
      return DType::kInt32;
    case torch::kInt64:
      return DType::kInt64;
    case torch::kBool:
      return DType::kBool;
    default:
      throw Error(std::string("LibTorch output of type ") + c10::toString(type) + " is not supported");
  }
}

// Every tensor in a forward() result, in order (a tensor, or a tuple/list of tensors).
void collect_tensors(const c10::IValue& value, std::vector<at::Tensor>& out) {
  if (value.isTensor()) {
    out.push_back(value.toTensor());
  } else if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) collect_tensors(element, out);
  } else if (value.isList()) {
    for (const auto& element : value.toListRef()) collect_tensors(element, out);
  } else {
    throw Error("LibTorch forward() returned a " + value.tagKind() + ", not tensors");
  }
}

// What forward() takes at each argument: a tensor, or a Python scalar (TorchScript `int`,
// `float`, `bool`), which the manifest declares as a rank-0 input of an integer, floating-point
// or bool dtype and the session passes as that scalar (e.g. silero-vad's `sr: int`).
enum class ArgumentKind { kTensor, kInt, kFloat, kBool };

std::vector<ArgumentKind> argument_kinds(torch::jit::Module& module, const std::vector<TensorSpec>& inputs) {
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  std::vector<ArgumentKind> kinds;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto kind = i + 1 < arguments.size() ? arguments[i + 1].type()->kind() : c10::TypeKind::TensorType;  // [0]: self
    kinds.push_back(kind == c10::TypeKind::IntType     ? ArgumentKind::kInt
                    : kind == c10::TypeKind::FloatType ? ArgumentKind::kFloat
                    : kind == c10::TypeKind::BoolType  ? ArgumentKind::kBool
                                                       : ArgumentKind::kTensor);
  }
  return kinds;
}

// The one value of input `t` as the Python scalar forward() declares for it.
c10::IValue scalar_argument(const Tensor& t, ArgumentKind kind) {
  const char* wanted = kind == ArgumentKind::kInt ? "int" : kind == ArgumentKind::kFloat ? "float" : "bool";
  if (t.element_count() != 1)
    throw Error("input '" + t.name + "': forward() takes a TorchScript " + wanted + " there, so it must hold one value, not " +
                std::to_string(t.element_count()));
  switch (t.dtype) {
    case DType::kInt64:
      if (kind == ArgumentKind::kInt) return c10::IValue(*t.as<std::int64_t>());
      break;
    case DType::kInt32:
      if (kind == ArgumentKind::kInt) return c10::IValue(static_cast<std::int64_t>(*t.as<std::int32_t>()));
      break;
    case DType::kFloat32:
      if (kind == ArgumentKind::kFloat) return c10::IValue(static_cast<double>(*t.as<float>()));
      break;
    case DType::kFloat64:
      if (kind == ArgumentKind::kFloat) return c10::IValue(*t.as<double>());
      break;
    case DType::kBool:
      if (kind == ArgumentKind::kBool) return c10::IValue(*t.as<bool>());
      break;
    default:
      break;
  }
  throw Error("input '" + t.name + "': forward() takes a TorchScript " + wanted + " there; a " +
              std::string(dtype_name(t.dtype)) +
              " input cannot be passed as one (declare it in the manifest with a matching dtype)");
}

// LibTorch's thread pools are per process and can be sized only before first use; record what
// was requested versus what the process really runs with.
EffectiveSetting apply_threads(int intra, int inter) {
  if (intra > 0) at::set_num_threads(intra);
  if (inter > 0) {
    try {
      at::set_num_interop_threads(inter);
    } catch (const c10::Error&) {
      // already started in this process; reported below through the effective value
    }
  }
  return observed_threads(intra, at::get_num_threads(), "at::get_num_threads(), read back after setting it");
}

class LibTorchSession final : public Session {
  // Torch tensors wrapping `tensors`' buffers (cast copies at reduced precision).
  std::vector<c10::IValue> to_values(std::vector<Tensor>& tensors) const {
    std::vector<c10::IValue> values;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      auto& t = tensors[i];
      if (i < kinds_.size() && kinds_[i] != ArgumentKind::kTensor) {
        values.push_back(scalar_argument(t, kinds_[i]));
        continue;
      }
      auto tensor = torch::from_blob(t.data.data(), t.shape, torch::TensorOptions().dtype(to_torch(t.dtype)));
      if (tensor.is_floating_point() && precision_ != torch::kFloat32) tensor = tensor.to(precision_);
      values.emplace_back(tensor);
    }
    return values;
  }

 public:
  LibTorchSession(const std::filesystem::path& model, const SessionOptions& options) {
    check_option_keys(kName, options.extras, kOptions);
    const bool freeze = parse_bool_option(kName, "freeze", option_or(options.extras, "freeze", "off"));
    const bool optimize =
        parse_bool_option(kName, "optimize_for_inference", option_or(options.extras, "optimize_for_inference", "off"));
    if (options.device != "cpu") throw Error("--device " + options.device + ": backend 'libtorch' is built for the CPU here");
    inputs_ = read_manifest_tensors(model, "inputs");
    outputs_ = read_manifest_tensors(model, "outputs");
    if (inputs_.empty())
      throw Error("cannot load " + model.string() + ": a TorchScript file declares no inputs; infermark reads them from " +
                  manifest_path(model).string() + " (written by tools/zoo), which is missing or lists none");
    const auto threads = apply_threads(options.intra_op_threads, options.inter_op_threads);
    module_ = torch::jit::load(model.string());
    module_.eval();
    kinds_ = argument_kinds(module_, inputs_);
    precision_ = options.precision == "bf16" ? torch::kBFloat16 : options.precision == "fp16" ? torch::kFloat16 : torch::kFloat32;
    if (precision_ != torch::kFloat32) module_.to(precision_);
    if (freeze) module_ = torch::jit::freeze(module_);
    if (freeze && optimize) module_ = torch::jit::optimize_for_inference(module_);
    const auto unverified = SettingState::kUnverified;  // set here, not read back
    settings_ = {
        threads,
        observed_threads(options.inter_op_threads, at::get_num_interop_threads(),
                         "at::get_num_interop_threads(); LibTorch sizes its inter-op pool only before first use",
                         "inter_op_threads"),
        {"precision", options.precision, c10::toString(precision_), unverified,
         precision_ == torch::kFloat32 ? "" : "module and floating-point inputs cast to this type"},
        {"freeze", option_or(options.extras, "freeze", ""), freeze ? "on" : "off", unverified, ""},
        {"optimize_for_inference", option_or(options.extras, "optimize_for_inference", ""), freeze && optimize ? "on" : "off",
         configured_state(freeze || !optimize), freeze || !optimize ? "" : "needs freeze=on"},
        {"inference_mode", "", "on (torch::InferenceMode)", unverified, ""}};
  }

  // In place only at FP32 with tensor arguments only: other precisions bind converted copies of
  // the inputs, and a Python scalar argument holds a copy of its value.
  SessionCapabilities capabilities() const override {
    const bool all_tensors = std::all_of(kinds_.begin(), kinds_.end(), [](ArgumentKind k) { return k == ArgumentKind::kTensor; });
    return {.in_place_inputs = precision_ == torch::kFloat32 && all_tensors, .varying_shapes = true};
  }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    bound_inputs_ = inputs;  // the torch tensors below wrap these buffers
    slot_inputs_.assign(static_cast<std::size_t>(slots), to_values(bound_inputs_));
    slot_outputs_.assign(static_cast<std::size_t>(slots), c10::IValue());
    run(0);  // the first call compiles the optimised graph; not timed
  }

  // Varying shapes: one set of torch values per input set, shared by the slots (forward() only
  // reads them). TorchScript has no per-shape preparation; its profiling executor specialises
  // the graph to the shapes it sees.
  void set_input_sets(const std::vector<std::vector<Tensor>>& sets, int slots, bool few_shapes) override {
    input_sets_ = sets;
    set_values_.clear();
    for (auto& set : input_sets_) set_values_.push_back(to_values(set));
    slot_outputs_.assign(static_cast<std::size_t>(slots), c10::IValue());
    settings_.push_back({"shape_preparation", few_shapes ? "each bucketed shape" : "", "one module for every shape",
                         configured_state(!few_shapes),
                         few_shapes ? "LibTorch has no per-shape preparation; each shape runs the one module" : ""});
  }

  void run_set(int slot, std::size_t set) override {
    c10::InferenceMode guard;
    slot_outputs_[static_cast<std::size_t>(slot)] = module_.forward(set_values_[set]);
  }

  // A scripted module's forward() may run on several threads at once.
  void run(int slot) override {
    c10::InferenceMode guard;
    const auto s = static_cast<std::size_t>(slot);
    slot_outputs_[s] = module_.forward(slot_inputs_[s]);
  }
  int max_slots() const override { return 1024; }

  void overwrite_input(std::size_t index, std::span<const std::byte> data) override {
    overwrite_data(bound_inputs_.at(index), data);  // the bound torch tensors wrap this buffer
  }

  std::vector<Tensor> outputs() override {
    std::vector<at::Tensor> tensors;
    collect_tensors(slot_outputs_.at(0), tensors);
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const auto t = tensors[i].contiguous();
      Tensor out{i < outputs_.size() ? outputs_[i].name : "output" + std::to_string(i),
                 from_torch(t.scalar_type()),
                 t.sizes().vec(),
                 {}};
      out.data.resize(t.nbytes());
      std::memcpy(out.data.data(), t.data_ptr(), out.data.size());
      result.push_back(std::move(out));
    }
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  torch::jit::Module module_;
  c10::ScalarType precision_ = torch::kFloat32;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<ArgumentKind> kinds_;  // per input: a tensor or a Python scalar argument of forward()
  std::vector<Tensor> bound_inputs_;
  std::vector<std::vector<c10::IValue>> slot_inputs_;
  std::vector<std::vector<Tensor>> input_sets_;       // varying shapes: every input set
  std::vector<std::vector<c10::IValue>> set_values_;  // their torch values
  std::vector<c10::IValue> slot_outputs_;
  std::vector<EffectiveSetting> settings_;
};

// LibTorch's loader errors start with the C++ source location of its check; the cause users need
// is what follows. The TorchScript compiler's (a corrupted archive's code) start with a line break.
// An archive from a newer PyTorch gets the remedy too.
std::string load_error_cause(const std::string& message) {
  static const std::regex located(R"(^\s*\[enforce fail at [^\]]*\]\s*\.?\s*)");
  static const std::regex padding(R"(^\s+|\s+$)");
  const auto cause = std::regex_replace(std::regex_replace(message, located, ""), padding, "");
  static const std::regex newer(R"(version (\d+), but the maximum supported version for reading is (\d+))");
  std::smatch m;
  if (std::regex_search(cause, m, newer))
    return "TorchScript archive format version " + m[1].str() + " was written by a newer PyTorch than LibTorch " + TORCH_VERSION +
           " reads (at most version " + m[2].str() +
           "); export it with the python3-torch that matches this LibTorch (tools/zoo does)";
  return cause;
}

class LibTorchBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(
        kName, TORCH_VERSION, {"cpu"},
        "Debian libtorch-dev (version from its headers); TorchScript input specs come from the zoo manifest", kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = false}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    try {
      return std::make_unique<LibTorchSession>(model, options);
    } catch (const c10::Error& e) {
      throw Error("cannot load " + model.string() + ": " + load_error_cause(e.what_without_backtrace()));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      // torch::jit::ErrorReport: the TorchScript compiler rejected the archive's code (corrupted or foreign).
      throw Error("cannot load " + model.string() + ": " + load_error_cause(e.what()));
    }
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::LibTorchBackend)

// MNN backend: Alibaba's MNN, built from the source the crates.io crate mnn-sys vendors, running
// .mnn files MNN's own converter writes from the zoo's ONNX files (MNN keeps the ONNX tensor
// names). One Interpreter and one CPU Session per infermark session. MNN's CPU session reuses
// its input tensors' memory for intermediate results during an inference, so an input copied in
// once holds other data after the first run (a second run computes on it and gives other
// outputs): each timed call copies the bound inputs in (NCHW host tensors made when bound) and
// then runs the session, and the result says so (setting `input_copy`).
//
// MNN's Session is not safe to use from several threads, so concurrent clients get sessions of
// their own (max_slots 1).
#include <MNN/MNNDefine.h>
#include <MNN/ErrorCode.hpp>
#include <MNN/Interpreter.hpp>
#include <MNN/Tensor.hpp>

#include <cstring>
#include <memory>
#include <string_view>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "core/model_manifest.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "mnn";
constexpr int kMnnDefaultThreads = 4;  // ScheduleConfig::numThread's default

struct InterpreterDeleter {
  void operator()(MNN::Interpreter* interpreter) const { MNN::Interpreter::destroy(interpreter); }
};

std::vector<std::int64_t> dims_of(const MNN::Tensor& tensor) {
  const auto shape = tensor.shape();
  return {shape.begin(), shape.end()};
}

// What precision MNN's CPU backend computes in for `requested`, configured on `config`.
EffectiveSetting apply_precision(const std::string& requested, MNN::BackendConfig& config) {
  if (requested == "fp16") {
    config.precision = MNN::BackendConfig::Precision_Low;
    return {"precision", requested, "fp32 on this x86 build (fp16 arithmetic is ARMv8.2's)", SettingState::kUnverified,
            "Precision_Low: MNN computes fp16 where the CPU has fp16 arithmetic (ARMv8.2, or AVX512-FP16 in an AVX512 build); "
            "this build's x86 kernels compute fp32"};
  }
  config.precision = MNN::BackendConfig::Precision_High;
  if (requested == "fp32") return {"precision", requested, "fp32", SettingState::kVerified, "Precision_High"};
  return {"precision", requested, "as the file's weights", SettingState::kNotApplied,
          "MNN computes INT8 from a file its quantisation tool wrote; this session runs the file as it is, at Precision_High"};
}

Tensor to_tensor(const std::string& name, const MNN::Tensor& device) {
  MNN::Tensor host(&device, MNN::Tensor::CAFFE);  // NCHW, allocated on the host
  if (!device.copyToHostTensor(&host)) throw Error("MNN could not copy output '" + name + "' to the host");
  if (host.getType() != halide_type_of<float>())
    throw Error("MNN output '" + name + "' is not float32: this backend reads float32 outputs only");
  Tensor tensor{name, DType::kFloat32, dims_of(host), {}};
  tensor.data.resize(static_cast<std::size_t>(host.elementSize()) * sizeof(float));
  std::memcpy(tensor.data.data(), host.host<float>(), tensor.data.size());
  return tensor;
}

class MnnSession final : public Session {
 public:
  MnnSession(const std::filesystem::path& model, const SessionOptions& options) {
    check_option_keys(kName, options.extras, {});
    if (options.device != "cpu") throw Error("--device " + options.device + ": backend 'mnn' is built for the CPU only");
    if (std::string_view(MNN::getVersion()) != MNN_VERSION)
      throw Error(std::string("libMNN is ") + MNN::getVersion() + ", but this backend was built against MNN " + MNN_VERSION);
    interpreter_.reset(MNN::Interpreter::createFromFile(model.string().c_str()));
    if (!interpreter_)
      throw Error("cannot load " + model.string() +
                  ": MNN::Interpreter::createFromFile failed: not an MNN model, or one this MNN cannot read");
    MNN::ScheduleConfig config;
    config.type = MNN_FORWARD_CPU;
    config.numThread = options.intra_op_threads > 0 ? options.intra_op_threads : kMnnDefaultThreads;
    MNN::BackendConfig backend;
    settings_.push_back(apply_precision(options.precision, backend));
    config.backendConfig = &backend;
    session_ = interpreter_->createSession(config);
    if (!session_) throw Error("cannot load " + model.string() + ": MNN could not create a CPU session for it");
    read_specs(model);
    int threads = 0;
    if (interpreter_->getSessionInfo(session_, MNN::Interpreter::THREAD_NUMBER, &threads))
      settings_.push_back(observed_threads(options.intra_op_threads, threads, "Interpreter::getSessionInfo(THREAD_NUMBER)"));
    else
      settings_.push_back(unverified_threads(options.intra_op_threads, std::to_string(config.numThread),
                                             "MNN did not report the session's thread count"));
    settings_.push_back(
        no_inter_op_threads(options.inter_op_threads, "MNN runs one operator at a time; it has no inter-op thread setting"));
    settings_.push_back({"device", options.device, "MNN_FORWARD_CPU", SettingState::kVerified, ""});
    settings_.push_back({"input_copy", "", "in each timed call", SettingState::kVerified,
                         "MNN's CPU session reuses its input tensors' memory during an inference, so each run copies the "
                         "bound inputs into the session (NCHW to MNN's layout) before runSession"});
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = false, .varying_shapes = false}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }
  int max_slots() const override { return 1; }

  // Shapes other than the session's are resized first (MNN plans memory per shape); each input's
  // NCHW host tensor is made here, over a copy of its bytes, for run() to copy in.
  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots != 1) throw Error("mnn: an MNN session serves one request at a time");
    bool resized = false;
    for (const auto& tensor : inputs) {
      if (tensor.dtype != DType::kFloat32)
        throw Error("input '" + tensor.name + "' is " + std::string(dtype_name(tensor.dtype)) +
                    ": this backend feeds MNN float32 only");
      auto* device = input_tensor(tensor.name);
      if (dims_of(*device) != tensor.shape) {
        interpreter_->resizeTensor(device, std::vector<int>(tensor.shape.begin(), tensor.shape.end()));
        resized = true;
      }
    }
    if (resized) interpreter_->resizeSession(session_);
    bound_.clear();
    for (const auto& tensor : inputs) {
      auto& input = bound_.emplace_back(BoundInput{input_tensor(tensor.name), tensor.data, nullptr});
      input.host.reset(MNN::Tensor::create(std::vector<int>(tensor.shape.begin(), tensor.shape.end()), halide_type_of<float>(),
                                           input.bytes.data(), MNN::Tensor::CAFFE));
    }
  }

  void run(int /*slot*/) override {
    for (const auto& input : bound_)
      if (!input.device->copyFromHostTensor(input.host.get())) throw Error("MNN could not copy an input into its session");
    if (const auto code = interpreter_->runSession(session_); code != MNN::NO_ERROR)
      throw Error("MNN inference failed (ErrorCode " + std::to_string(static_cast<int>(code)) + ")");
  }

  std::vector<Tensor> outputs() override {
    std::vector<Tensor> result;
    for (const auto& spec : outputs_) {
      auto* device = interpreter_->getSessionOutput(session_, spec.name.c_str());
      if (!device) throw Error("MNN has no output '" + spec.name + "'");
      result.push_back(to_tensor(spec.name, *device));
    }
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  MNN::Tensor* input_tensor(const std::string& name) const {
    auto* tensor = interpreter_->getSessionInput(session_, name.c_str());
    if (!tensor) throw Error("MNN's model has no input '" + name + "'");
    return tensor;
  }

  // The zoo's manifest where there is one (its order, and its named dynamic dimensions); else
  // the session's own tensors, which MNN names as the ONNX file did.
  void read_specs(const std::filesystem::path& model) {
    inputs_ = read_manifest_tensors(model, "inputs");
    outputs_ = read_manifest_tensors(model, "outputs");
    if (inputs_.empty()) {
      for (const auto& [name, tensor] : interpreter_->getSessionInputAll(session_))
        inputs_.push_back({name, DType::kFloat32, dims_of(*tensor), {}});
    }
    if (outputs_.empty()) {
      for (const auto& [name, tensor] : interpreter_->getSessionOutputAll(session_))
        outputs_.push_back({name, DType::kFloat32, dims_of(*tensor), {}});
    }
    for (const auto& spec : inputs_)
      if (!interpreter_->getSessionInput(session_, spec.name.c_str()))
        throw Error("cannot load " + model.string() + ": MNN's model has no input '" + spec.name + "' that " +
                    manifest_path(model).string() + " declares");
    for (const auto& spec : outputs_)
      if (!interpreter_->getSessionOutput(session_, spec.name.c_str()))
        throw Error("cannot load " + model.string() + ": MNN's model has no output '" + spec.name + "' that " +
                    manifest_path(model).string() + " declares");
  }

  struct BoundInput {
    MNN::Tensor* device;                // the session's, owned by it
    std::vector<std::byte> bytes;       // the host tensor's data
    std::unique_ptr<MNN::Tensor> host;  // NCHW, over `bytes`
  };

  std::unique_ptr<MNN::Interpreter, InterpreterDeleter> interpreter_;
  std::vector<BoundInput> bound_;
  MNN::Session* session_ = nullptr;  // owned by the interpreter
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<EffectiveSetting> settings_;
};

class MnnBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(kName, MNN::getVersion(), {"cpu"}, "MNN built from crates.io mnn-sys's vendored source (CPU)",
                                 {});
  }
  BackendCapabilities capabilities() const override { return {}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<MnnSession>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::MnnBackend)

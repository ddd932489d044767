// Paddle Inference backend: Baidu's Paddle Inference (FastDeploy's CPU runtime) through its own
// C++ API, from the library PyPI's paddlepaddle wheel carries (declared in
// paddle_inference_api.hpp: no registry ships the headers). Models are Paddle inference folders
// (<name>.paddle/ holding model.json, a PIR program, and model.pdiparams), which the zoo converts
// from its ONNX files with X2Paddle. One predictor per session, on the CPU with oneDNN (MKLDNN)
// kernels unless `--opt mkldnn=off`.
//
// X2Paddle renames tensors (x2paddle_input, fetch_name_0): the zoo's manifest beside the folder
// names them, in order, so results name tensors as the ONNX original does and cross-check
// against it. A predictor serves one request at a time (max_slots 1).
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/options.hpp"
#include "backends/paddle/paddle_inference_api.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"
#include "core/model_manifest.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "paddle";
constexpr std::string_view kVersion = INFERMARK_PADDLE_VERSION;  // the declarations' version
// paddle::AnalysisConfig is about 1.6 KB in 3.3.1; constructed in this much room.
constexpr std::size_t kConfigRoom = 16384;
// Paddle 3.3.1's oneDNN pass that folds a reshape into the transpose before it emits
// pd_op.fused_transpose, which has no kernel: a program with that pattern (X2Paddle's
// EfficientNet-Lite0) fails to load with "Ctx should have corresponding OpInfo". Without the pass
// the transpose and reshape run as two oneDNN operators.
constexpr const char* kBrokenOnednnPass = "operator_reshape_onednn_fuse_pass";
const std::vector<OptionDoc> kOptions{
    {"mkldnn", "on|off", "on", "oneDNN (MKLDNN) kernels and fusions; off: Paddle's own CPU kernels"}};

std::string library_version() {
  const auto text = paddle_infer::GetVersion();  // "version: 3.3.1\ncommit: ..."
  const auto start = text.find("version: ");
  if (start == std::string::npos) return text;
  const auto end = text.find('\n', start);
  return text.substr(start + 9, end == std::string::npos ? std::string::npos : end - start - 9);
}

void check_library_version() {
  if (const auto version = library_version(); version != kVersion)
    throw Error("libpaddle is Paddle " + version + ", but this backend declares Paddle " + std::string(kVersion) +
                "'s C++ API (src/backends/paddle/paddle_inference_api.hpp)");
}

// The config, in its own aligned storage: constructed and destroyed through the library.
// Paddle's messages carry a C++ call stack and a banner after the cause: the cause is kept.
std::string first_lines(const std::string& message) {
  const auto summary = message.find("Error Message Summary:");
  auto text = summary == std::string::npos ? message : message.substr(summary + 22);
  const auto hint = text.find(" [Hint:");
  if (hint != std::string::npos) text.resize(hint);
  text.erase(0, text.find_first_not_of(" \n-"));
  if (text.size() > 600) text.resize(600);
  return text;
}

class Config {
 public:
  Config() { config_ = new (storage_.data()) paddle::AnalysisConfig(); }
  ~Config() { config_->~AnalysisConfig(); }
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;
  paddle::AnalysisConfig& operator*() { return *config_; }
  paddle::AnalysisConfig* operator->() { return config_; }

 private:
  alignas(64) std::array<std::byte, kConfigRoom> storage_{};
  paddle::AnalysisConfig* config_ = nullptr;
};

EffectiveSetting precision_setting(const std::string& requested) {
  if (requested == "fp32")
    return {"precision", requested, "fp32", SettingState::kVerified, "the folder's FP32 program on Paddle's CPU kernels"};
  return {"precision", requested, "fp32", SettingState::kNotApplied,
          "Paddle Inference computes FP16/INT8 on the CPU only from a program quantised for it (PaddleSlim); this session runs "
          "the folder's FP32 program"};
}

// SetCpuMathLibraryNumThreads sizes Paddle's Intel OpenMP team, but Paddle also starts helper
// threads beside it, how many depending on the program and on what the process ran before (for
// N asked: N threads started with tiny_cnn, N + 1 with EfficientNet-Lite0, fewer in a process that
// ran Paddle already), and the team's size is not readable from outside (omp_get_max_threads()
// in the calling thread says 1): the count is reported, not taken as proof.
EffectiveSetting threads_setting(int requested, int configured, const std::optional<int>& started) {
  return unverified_threads(
      requested, std::to_string(configured),
      "SetCpuMathLibraryNumThreads(" + std::to_string(configured) + ") set" + (requested > 0 ? "" : " (Paddle's default: 1)") +
          (started ? "; " + std::to_string(*started) + " threads started while loading and running once, helper threads included"
                   : ""));
}

class PaddleSession final : public Session {
 public:
  PaddleSession(const std::filesystem::path& model, const SessionOptions& options) : model_(model) {
    check_option_keys(kName, options.extras, kOptions);
    if (options.device != "cpu") throw Error("--device " + options.device + ": backend 'paddle' is built for the CPU only");
    check_library_version();
    const auto program = model / "model.json", params = model / "model.pdiparams";
    for (const auto& file : {program, params}) {
      if (!std::filesystem::is_regular_file(file))
        throw Error("cannot load " + model.string() + ": " + file.filename().string() +
                    " is missing (a Paddle inference folder holds model.json and model.pdiparams)");
      // Paddle 3.3.1 loads parameters cut short without a word and computes on what it read: the
      // size the zoo recorded, where there is one, is checked first.
      const auto recorded = read_manifest_member_size(model, "paddle", file.filename().string());
      if (recorded && *recorded != std::filesystem::file_size(file))
        throw Error("cannot load " + model.string() + ": " + file.filename().string() + " is " +
                    std::to_string(std::filesystem::file_size(file)) + " bytes, " + manifest_path(model).string() + " records " +
                    std::to_string(*recorded) + " (truncated or replaced)");
    }
    const bool mkldnn = parse_bool_option(kName, "mkldnn", option_or(options.extras, "mkldnn", "on"));
    Config config;
    config->SetModel(program.string(), params.string());
    config->DisableGpu();
    if (mkldnn) {
      config->EnableMKLDNN();
      config->DeletePass(kBrokenOnednnPass);
    } else {
      config->DisableMKLDNN();
    }
    const int threads = options.intra_op_threads > 0 ? options.intra_op_threads : 1;  // Paddle's own default: 1
    config->SetCpuMathLibraryNumThreads(threads);
    config->DisableGlogInfo();
    const auto started = threads_started_by([&] {
      try {
        predictor_ = paddle_infer::CreatePredictor(*config);
      } catch (const std::exception& e) {  // Paddle's EnforceNotMet: an unreadable program or parameters
        throw Error("cannot load " + model.string() + ": Paddle Inference: " + first_lines(e.what()));
      }
      if (!predictor_) throw Error("cannot load " + model.string() + ": Paddle Inference could not create a predictor for it");
      read_specs();
      warm_up();
    });
    settings_.push_back(threads_setting(options.intra_op_threads, threads, started));
    settings_.push_back(precision_setting(options.precision));
    settings_.push_back(no_inter_op_threads(
        options.inter_op_threads, "Paddle Inference runs one operator at a time on the CPU; it has no inter-op threads"));
    settings_.push_back({"device", options.device, mkldnn ? "CPU (oneDNN kernels)" : "CPU (Paddle's own kernels)",
                         SettingState::kUnverified,
                         mkldnn ? std::string("EnableMKLDNN() set; ") + kBrokenOnednnPass +
                                      " removed (in Paddle 3.3.1 it emits pd_op.fused_transpose, which has no kernel)"
                                : "DisableMKLDNN() set"});
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = false, .varying_shapes = false}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }
  int max_slots() const override { return 1; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots != 1) throw Error("paddle: a Paddle predictor serves one request at a time");
    if (inputs.size() != inputs_.size())
      throw Error("paddle: the program takes " + std::to_string(inputs_.size()) + " inputs, " + std::to_string(inputs.size()) +
                  " given");
    bound_ = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].dtype != DType::kFloat32 && inputs[i].dtype != DType::kInt64)
        throw Error("input '" + inputs[i].name + "' is " + std::string(dtype_name(inputs[i].dtype)) +
                    ": this backend feeds Paddle float32 and int64");
  }

  // Each timed call copies the inputs into the predictor's tensors (Paddle's ZeroCopy handles
  // hold the predictor's own memory) and runs it, as Paddle's own benchmark does.
  void run(int /*slot*/) override {
    for (std::size_t i = 0; i < bound_.size(); ++i) {
      const auto& tensor = bound_[i];
      auto& handle = *input_handles_[i];
      handle.Reshape(std::vector<int>(tensor.shape.begin(), tensor.shape.end()));
      if (tensor.dtype == DType::kFloat32)
        handle.CopyFromCpu(tensor.as<float>());
      else
        handle.CopyFromCpu(reinterpret_cast<const long*>(tensor.data.data()));
    }
    bool ran = false;
    try {
      ran = predictor_->Run();
    } catch (const std::exception& e) {
      throw Error("Paddle Inference failed to run " + model_.string() + ": " + first_lines(e.what()));
    }
    if (!ran) throw Error("Paddle Inference failed to run " + model_.string());
  }

  std::vector<Tensor> outputs() override {
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      auto& handle = *output_handles_[i];
      const auto shape = handle.shape();
      Tensor tensor{outputs_[i].name, outputs_[i].dtype, {shape.begin(), shape.end()}, {}};
      tensor.data.resize(tensor.element_count() * dtype_size(tensor.dtype));
      if (tensor.dtype == DType::kFloat32)
        handle.CopyToCpu(reinterpret_cast<float*>(tensor.data.data()));
      else
        handle.CopyToCpu(reinterpret_cast<long*>(tensor.data.data()));
      result.push_back(std::move(tensor));
    }
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  // The manifest's names and shapes, in the predictor's order; the predictor's own names where
  // there is no manifest (Paddle's handles do not report shapes before a run: dynamic then).
  void read_specs() {
    const auto input_names = predictor_->GetInputNames();
    const auto output_names = predictor_->GetOutputNames();
    inputs_ = read_manifest_tensors(model_, "inputs");
    outputs_ = read_manifest_tensors(model_, "outputs");
    if (inputs_.empty() || outputs_.empty())
      throw Error("cannot load " + model_.string() + ": " + manifest_path(model_).string() +
                  " is missing or names no inputs and outputs; X2Paddle's folders carry no tensor shapes, so the zoo's "
                  "manifest gives them");
    const auto agree = [&](const std::vector<std::string>& names, const std::vector<TensorSpec>& specs, const char* which) {
      if (names.size() != specs.size())
        throw Error("cannot load " + model_.string() + ": the program has " + std::to_string(names.size()) + " " + which + ", " +
                    manifest_path(model_).string() + " declares " + std::to_string(specs.size()));
    };
    agree(input_names, inputs_, "inputs");
    agree(output_names, outputs_, "outputs");
    for (const auto& name : input_names) input_handles_.push_back(predictor_->GetInputHandle(name));
    for (const auto& name : output_names) output_handles_.push_back(predictor_->GetOutputHandle(name));
  }

  // One run on zeros at the manifest's shape (dynamic dimensions 1), which starts the thread pool.
  void warm_up() {
    std::vector<Tensor> zeros;
    for (const auto& spec : inputs_) {
      Tensor tensor{spec.name, spec.dtype, spec.shape, {}};
      for (auto& d : tensor.shape)
        if (d < 0) d = 1;
      tensor.data.assign(tensor.element_count() * dtype_size(tensor.dtype), std::byte{0});
      zeros.push_back(std::move(tensor));
    }
    set_inputs(zeros, 1);
    run(0);
  }

  std::filesystem::path model_;
  std::shared_ptr<paddle_infer::Predictor> predictor_;
  std::vector<std::unique_ptr<paddle_infer::Tensor>> input_handles_, output_handles_;
  std::vector<Tensor> bound_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<EffectiveSetting> settings_;
};

class PaddleBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(kName, library_version(), {"cpu"},
                                 "Paddle Inference's C++ API from PyPI's paddlepaddle wheel (CPU, oneDNN)", kOptions);
  }
  BackendCapabilities capabilities() const override { return {}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<PaddleSession>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::PaddleBackend)

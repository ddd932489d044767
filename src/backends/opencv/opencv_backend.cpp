// OpenCV DNN backend: Debian's OpenCV reads the ONNX model and runs it on its own CPU
// implementation (DNN_BACKEND_OPENCV, DNN_TARGET_CPU) in float32. The model's input and output
// specs come from the ONNX file itself (onnx_input_reader), because OpenCV 4.6 does not report
// them. Inputs are copied into OpenCV blobs once; a timed run is Net::forward and nothing else.
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <cstring>
#include <sstream>
#include <string_view>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/opencv/onnx_input_reader.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "opencv";

// OpenCV's own cause without its source location (e.err rather than e.what()). The ONNX importer
// quotes the failing node's error as "> ..." lines; those markers are dropped and the lines joined.
std::string opencv_cause(const cv::Exception& e) {
  std::string cause;
  std::istringstream lines(e.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(">")) line.erase(0, 1);
    const auto begin = line.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    cause += (cause.empty() ? "" : " ") + line.substr(begin);
  }
  return cause.empty() ? e.what() : cause;
}

// What OpenCV 4.6 cannot do behind a cause it words tersely, or "".
std::string known_limit(const std::string& cause) {
  if (cause.find("FLOAT16") != std::string::npos)
    return " (OpenCV 4.6 reads no FP16 ONNX tensors, and its CPU has no FP16 target: DNN_TARGET_CPU_FP16 does not "
           "exist in 4.6; run the FP32 file)";
  if (cause.find("parseClip") != std::string::npos)
    return " (OpenCV 4.6 parses Clip only with min/max attributes, ONNX opset <= 10: export at opset 10)";
  return "";
}

// Runs `action`, turning OpenCV's exception into infermark::Error prefixed with `context`.
template <typename Action>
decltype(auto) rethrow_opencv_errors(std::string_view context, Action&& action) {
  try {
    return action();
  } catch (const cv::Exception& e) {
    const auto cause = opencv_cause(e);
    throw Error(std::string(context) + ": " + cause + known_limit(cause));
  }
}

// OpenCV 4.6 names its parallel framework (TBB, OpenMP, pthreads) only in its build information.
std::string parallel_framework() {
  const std::string& info = cv::getBuildInformation();
  const std::string key = "Parallel framework:";
  const auto at = info.find(key);
  if (at == std::string::npos) return "unknown";
  const auto begin = info.find_first_not_of(' ', at + key.size());
  return info.substr(begin, info.find('\n', begin) - begin);
}

// cv::setNumThreads is process-wide, so every session sets it: 0 restores OpenCV's default (-1)
// instead of inheriting whatever an earlier session in this process chose.
EffectiveSetting apply_intra_op_threads(int requested) {
  cv::setNumThreads(requested > 0 ? requested : -1);
  return observed_threads(requested, cv::getNumThreads(), "cv::getNumThreads(), read back after setting it");
}

EffectiveSetting precision_setting(const std::string& requested) {
  const bool applied = requested == "fp32";
  return {"precision", requested, "fp32", configured_state(applied),
          applied ? "" : "OpenCV 4.6's CPU target (DNN_TARGET_CPU) computes in fp32 only"};
}

cv::Mat to_blob(const Tensor& tensor) {
  if (tensor.dtype != DType::kFloat32)
    throw Error("input '" + tensor.name + "' is " + std::string(dtype_name(tensor.dtype)) +
                ": OpenCV DNN only takes float32 inputs here");
  if (tensor.shape.empty()) throw Error("input '" + tensor.name + "' is a scalar: OpenCV DNN blobs need at least one dimension");
  cv::Mat blob(std::vector<int>(tensor.shape.begin(), tensor.shape.end()), CV_32F);
  std::memcpy(blob.data, tensor.data.data(), tensor.data.size());
  return blob;
}

Tensor to_tensor(const std::string& name, const cv::Mat& blob) {
  cv::Mat values;
  blob.convertTo(values, CV_32F);  // a continuous float32 copy (the CPU target already computes in float32)
  Tensor tensor{name, DType::kFloat32, std::vector<std::int64_t>(blob.size.p, blob.size.p + blob.dims), {}};
  tensor.data.resize(values.total() * values.elemSize());
  std::memcpy(tensor.data.data(), values.data, tensor.data.size());
  return tensor;
}

class OpenCvSession final : public Session {
 public:
  OpenCvSession(const std::filesystem::path& model, const SessionOptions& options) {
    check_option_keys(kName, options.extras, {});  // OpenCV DNN takes no framework options here
    if (options.device != "cpu") throw Error("--device " + options.device + ": backend 'opencv' runs on the CPU only");
    net_ = cv::dnn::readNetFromONNX(model.string());
    net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    auto signature = read_onnx_signature(model);
    inputs_ = std::move(signature.inputs);
    outputs_ = std::move(signature.outputs);
    for (const auto& spec : outputs_) output_names_.push_back(spec.name);
    check_outputs_are_layers(model);
    settings_ = {
        apply_intra_op_threads(options.intra_op_threads),
        no_inter_op_threads(options.inter_op_threads, "OpenCV DNN runs one layer at a time; it has no inter-op thread setting"),
        precision_setting(options.precision),
        {"device", options.device, "DNN_BACKEND_OPENCV, DNN_TARGET_CPU", SettingState::kUnverified, ""},
        {"parallel_framework", "", parallel_framework(), SettingState::kVerified, "OpenCV's build information"},
    };
  }

  // Inputs are copied into blobs at binding time, so there is no feeding in place.
  SessionCapabilities capabilities() const override { return {.in_place_inputs = false, .varying_shapes = true}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots != 1) throw Error("opencv: a cv::dnn::Net serves one request at a time");
    for (const auto& tensor : inputs)
      rethrow_opencv_errors("OpenCV DNN rejected input '" + tensor.name + "'",
                            [&] { net_.setInput(to_blob(tensor), tensor.name); });
  }

  // cv::dnn::Net is not safe to share between threads; concurrent clients get their own sessions.
  int max_slots() const override { return 1; }

  void run(int /*slot*/) override {
    rethrow_opencv_errors("OpenCV DNN inference failed", [&] { net_.forward(output_blobs_, output_names_); });
  }

  // Varying shapes: blobs made ahead; the timed call sets them and runs, because a cv::dnn::Net
  // holds one input shape and re-plans its buffers when it changes, which is the cost measured.
  void set_input_sets(const std::vector<std::vector<Tensor>>& sets, int slots, bool few_shapes) override {
    if (slots != 1) throw Error("opencv: a cv::dnn::Net serves one request at a time");
    set_blobs_.clear();
    for (const auto& set : sets) {
      auto& blobs = set_blobs_.emplace_back();
      for (const auto& tensor : set) blobs.emplace_back(tensor.name, to_blob(tensor));
    }
    settings_.push_back({"shape_preparation", few_shapes ? "each bucketed shape" : "", "one network for every shape",
                         configured_state(!few_shapes),
                         few_shapes ? "OpenCV DNN has no per-shape preparation; the network re-plans on each shape change" : ""});
  }

  void run_set(int /*slot*/, std::size_t set) override {
    rethrow_opencv_errors("OpenCV DNN inference failed", [&] {
      for (const auto& [name, blob] : set_blobs_[set]) net_.setInput(blob, name);
      net_.forward(output_blobs_, output_names_);
    });
  }

  std::vector<Tensor> outputs() override {
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < output_blobs_.size(); ++i) result.push_back(to_tensor(output_names_[i], output_blobs_[i]));
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  // Net::forward fetches outputs by layer name; OpenCV's ONNX importer names each layer after its
  // node's first output, so a graph output that is not one cannot be fetched.
  void check_outputs_are_layers(const std::filesystem::path& model) const {
    for (const auto& name : output_names_)
      if (net_.getLayerId(name) < 0)
        throw Error("cannot load " + model.string() + ": OpenCV DNN has no layer for graph output '" + name + "'");
  }

  cv::dnn::Net net_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<cv::String> output_names_;
  std::vector<cv::Mat> output_blobs_;
  std::vector<std::vector<std::pair<std::string, cv::Mat>>> set_blobs_;  // varying shapes: each set's input blobs
  std::vector<EffectiveSetting> settings_;
};

class OpenCvBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(kName, cv::getVersionString(), {"cpu"}, "Debian libopencv-dnn-dev", {});
  }

  BackendCapabilities capabilities() const override { return {.generators = false}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    return rethrow_opencv_errors("cannot load " + model.string(),
                                 [&] { return std::make_unique<OpenCvSession>(model, options); });
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::OpenCvBackend)

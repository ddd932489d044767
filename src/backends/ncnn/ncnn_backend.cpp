// ncnn backend: Tencent's ncnn, built from its PyPI sdist, running the .ncnn.param/.ncnn.bin pair
// pnnx converts from an ONNX file. ncnn files carry no tensor shapes or the ONNX names, so the
// zoo's manifest beside the model (<name>.json, core/model_manifest.hpp) supplies both: the
// manifest's inputs and outputs in order are ncnn's input blobs (its Input layers) and output
// blobs (those no layer consumes), so results name tensors as the ONNX file does and cross-check
// against it. ncnn has no batch axis (a Mat is w, h, d, c): a batch of N is N extractions one
// after another in the timed call, each sample its own Mat, and the outputs stacked again.
//
// A ncnn::Net is read-only once loaded and safe to share; each request slot has its own input
// Mats, and a timed run is one Extractor made, fed and extracted, as ncnn's own benchncnn times it.
#include <ncnn/c_api.h>
#include <ncnn/cpu.h>
#include <ncnn/net.h>
#include <ncnn/platform.h>

#include <algorithm>
#include <cstring>
#include <optional>
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

constexpr const char* kName = "ncnn";
constexpr int kMaxSlots = 256;  // a Net serves any number of Extractors at once

// Sample `n` of an ONNX-layout tensor [N, c, h, w] (or [N, w], [N, h, w], [N, c, d, h, w]) as a
// Mat: the batch axis dropped, the others in ncnn's order. Copied channel by channel: a Mat's
// channels are aligned to 16 bytes, so a packed buffer is not one.
ncnn::Mat to_mat(const Tensor& tensor, std::int64_t n) {
  if (tensor.dtype != DType::kFloat32)
    throw Error("input '" + tensor.name + "' is " + std::string(dtype_name(tensor.dtype)) + ": ncnn takes float32 inputs only");
  const auto& s = tensor.shape;
  if (s.size() < 2 || s.size() > 5)
    throw Error("input '" + tensor.name + "' is " + format_shape(s) +
                ": ncnn takes tensors of 2 to 5 dimensions, the first the batch");
  const auto d = [&](std::size_t i) { return static_cast<int>(s[i]); };
  ncnn::Mat mat;
  switch (s.size()) {
    case 2:
      mat.create(d(1));
      break;
    case 3:
      mat.create(d(2), d(1));
      break;
    case 4:
      mat.create(d(3), d(2), d(1));
      break;
    default:
      mat.create(d(4), d(3), d(2), d(1));
      break;
  }
  if (mat.empty()) throw Error("input '" + tensor.name + "': ncnn could not allocate a " + format_shape(s) + " Mat");
  const auto plane = static_cast<std::size_t>(mat.w) * mat.h * mat.d * sizeof(float);
  const auto* sample = tensor.data.data() + static_cast<std::size_t>(n) * plane * static_cast<std::size_t>(mat.c);
  for (int q = 0; q < mat.c; ++q) std::memcpy(mat.channel(q).data, sample + static_cast<std::size_t>(q) * plane, plane);
  return mat;
}

// Each sample's Mat of one output, stacked into a float32 tensor of `spec`'s rank: [N, ...] where
// the spec has the batch axis ncnn lacks.
Tensor to_tensor(const TensorSpec& spec, const std::vector<ncnn::Mat>& samples) {
  const auto& first = samples.front();
  std::vector<std::int64_t> dims;
  if (first.dims >= 3) dims.push_back(first.c);
  if (first.dims == 4) dims.push_back(first.d);
  if (first.dims >= 2) dims.push_back(first.h);
  dims.push_back(first.w);
  if (spec.shape.size() == dims.size() + 1) dims.insert(dims.begin(), static_cast<std::int64_t>(samples.size()));
  Tensor tensor{spec.name, DType::kFloat32, dims, {}};
  const auto plane = static_cast<std::size_t>(first.w) * first.h * first.d * sizeof(float);
  const auto per_sample = plane * static_cast<std::size_t>(first.c);
  tensor.data.resize(per_sample * samples.size());
  for (std::size_t n = 0; n < samples.size(); ++n) {
    if (samples[n].w != first.w || samples[n].h != first.h || samples[n].d != first.d || samples[n].c != first.c)
      throw Error("ncnn output '" + spec.name + "': samples of one batch came out in different shapes");
    for (int q = 0; q < first.c; ++q)
      std::memcpy(tensor.data.data() + n * per_sample + static_cast<std::size_t>(q) * plane, samples[n].channel(q).data, plane);
  }
  return tensor;
}

// pnnx names blobs in0, in1, ... and out0, out1, ... in the ONNX file's order; ncnn lists output
// blobs in layer order, which a graph with several outputs need not share. Other names keep ncnn's order.
std::vector<std::string> in_file_order(const std::vector<const char*>& names, std::string_view prefix) {
  std::vector<std::string> ordered(names.begin(), names.end());
  const auto numbered = [&](const std::string& n) {
    return n.size() > prefix.size() && n.starts_with(prefix) &&
           std::all_of(n.begin() + static_cast<long>(prefix.size()), n.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (std::all_of(ordered.begin(), ordered.end(), numbered))
    std::sort(ordered.begin(), ordered.end(), [&](const std::string& a, const std::string& b) {
      return std::stoi(a.substr(prefix.size())) < std::stoi(b.substr(prefix.size()));
    });
  return ordered;
}

std::filesystem::path weights_of(const std::filesystem::path& param) {
  auto file = param.filename().string();
  file.replace(file.size() - std::string_view(".param").size(), std::string_view(".param").size(), ".bin");
  return param.parent_path() / file;
}

// What precision ncnn computes in on this CPU for `requested`, configured on `opt`.
EffectiveSetting apply_precision(const std::string& requested, ncnn::Option& opt) {
  // ncnn's defaults store activations in fp16 wherever the CPU converts them (x86 F16C): fp32
  // means every reduced-precision storage and arithmetic off.
  const bool fp16 = requested == "fp16";
  opt.use_fp16_packed = opt.use_fp16_storage = opt.use_fp16_arithmetic = fp16;
  opt.use_bf16_storage = false;
  if (requested == "fp32") return {"precision", requested, "fp32", SettingState::kVerified, "every fp16/bf16 option of ncnn off"};
  if (fp16) {
    if (ncnn::cpu_support_x86_f16c() || ncnn::cpu_support_arm_asimdhp())
      return {"precision", requested,
              ncnn::cpu_support_arm_asimdhp() ? "fp16 storage and arithmetic" : "fp16 storage, fp32 arithmetic",
              SettingState::kUnverified,
              "use_fp16_storage/packed/arithmetic on; x86 has no fp16 arithmetic, so ncnn computes in fp32 there"};
    return {"precision", requested, "fp32", SettingState::kNotApplied,
            "this CPU has neither F16C nor ARM fp16: ncnn stores fp32"};
  }
  return {"precision", requested, "as the file's weights", SettingState::kNotApplied,
          "ncnn computes INT8 only from a file quantised by its ncnn2table and ncnn2int8 tools, which no registry ships "
          "(PyPI's ncnn sdist carries the library alone); this session runs the file as it is, in fp32"};
}

class NcnnSession final : public Session {
 public:
  NcnnSession(const std::filesystem::path& model, const SessionOptions& options) {
    check_option_keys(kName, options.extras, {});
    if (options.device != "cpu")
      throw Error("--device " + options.device + ": backend 'ncnn' is built for the CPU only (no Vulkan)");
    if (std::string_view(ncnn_version()) != NCNN_VERSION_STRING)
      throw Error(std::string("libncnn is ") + ncnn_version() + ", but this backend was built against ncnn " +
                  NCNN_VERSION_STRING);
    auto& opt = net_.opt;
    opt.use_vulkan_compute = false;
    const int threads = options.intra_op_threads > 0 ? options.intra_op_threads : ncnn::get_physical_big_cpu_count();
    opt.num_threads = threads;
    settings_.push_back(apply_precision(options.precision, opt));
    inputs_ = read_manifest_tensors(model, "inputs");
    outputs_ = read_manifest_tensors(model, "outputs");
    // ncnn starts its OpenMP team while loading (weight transforms run in parallel regions) and
    // in the first extraction: the workers started across both are counted.
    const auto started = threads_started_by([&] {
      load(model);
      warm_up();
    });
    settings_.push_back(threads_setting(options.intra_op_threads, threads, started));
    settings_.push_back(
        no_inter_op_threads(options.inter_op_threads, "ncnn runs one layer at a time; it has no inter-op thread setting"));
    settings_.push_back({"device", options.device, "CPU (ncnn built without Vulkan)", SettingState::kVerified, ""});
    settings_.push_back(
        {"isa", "", isa_text(), SettingState::kVerified, "ncnn::cpu_support_x86_*: the kernels ncnn dispatches to"});
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = false, .varying_shapes = false}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }
  int max_slots() const override { return kMaxSlots; }

  // Each slot holds every sample's Mats: [sample][input].
  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (inputs.size() != input_blobs_.size())
      throw Error("ncnn: " + std::to_string(inputs.size()) + " inputs given, the model takes " +
                  std::to_string(input_blobs_.size()));
    const auto batch = inputs.front().shape.empty() ? 0 : inputs.front().shape.front();
    for (const auto& tensor : inputs)
      if (tensor.shape.empty() || tensor.shape.front() != batch)
        throw Error("ncnn: input '" + tensor.name + "' has another batch than '" + inputs.front().name + "'");
    slot_inputs_.assign(static_cast<std::size_t>(slots), {});
    slot_outputs_.assign(static_cast<std::size_t>(slots), {});
    for (std::size_t slot = 0; slot < slot_inputs_.size(); ++slot)
      for (std::int64_t n = 0; n < batch; ++n) {
        auto& mats = slot_inputs_[slot].emplace_back();
        for (const auto& tensor : inputs) mats.push_back(to_mat(tensor, n));
        slot_outputs_[slot].emplace_back(output_blobs_.size());
      }
    batch_setting(batch);
  }

  // One extraction per sample: ncnn has no batch axis.
  void run(int slot) override {
    const auto& samples = slot_inputs_[static_cast<std::size_t>(slot)];
    auto& outputs = slot_outputs_[static_cast<std::size_t>(slot)];
    for (std::size_t n = 0; n < samples.size(); ++n) {
      auto extractor = net_.create_extractor();
      for (std::size_t i = 0; i < samples[n].size(); ++i)
        if (const int rc = extractor.input(input_blobs_[i].c_str(), samples[n][i]); rc != 0)
          throw Error("ncnn rejected input blob '" + input_blobs_[i] + "' (" + std::to_string(rc) + ")");
      for (std::size_t i = 0; i < outputs[n].size(); ++i)
        if (const int rc = extractor.extract(output_blobs_[i].c_str(), outputs[n][i]); rc != 0)
          throw Error("ncnn inference failed extracting blob '" + output_blobs_[i] + "' (" + std::to_string(rc) + ")");
    }
  }

  std::vector<Tensor> outputs() override {
    std::vector<Tensor> result;
    const auto& samples = slot_outputs_.at(0);
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      std::vector<ncnn::Mat> per_sample;
      for (const auto& sample : samples) per_sample.push_back(sample.at(i));
      result.push_back(to_tensor(outputs_[i], per_sample));
    }
    return result;
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  // The param and weights files, then the blobs matched to the manifest's tensors.
  void load(const std::filesystem::path& model) {
    const auto weights = weights_of(model);
    if (const int rc = net_.load_param(model.string().c_str()); rc != 0)
      throw Error("cannot load " + model.string() + ": ncnn::Net::load_param failed (" + std::to_string(rc) +
                  "): not an ncnn param file, or a layer this ncnn does not have");
    if (!std::filesystem::exists(weights))
      throw Error("cannot load " + model.string() + ": its weights " + weights.string() + " are missing");
    if (const int rc = net_.load_model(weights.string().c_str()); rc != 0)
      throw Error("cannot load " + model.string() + ": ncnn::Net::load_model(" + weights.string() + ") failed (" +
                  std::to_string(rc) + "): the weights are truncated or do not belong to this param file");
    if (inputs_.empty() || outputs_.empty())
      throw Error("cannot load " + model.string() + ": ncnn files name no tensor shapes, and " + manifest_path(model).string() +
                  " (the zoo's manifest, written when the model was converted) declares no inputs and outputs");
    input_blobs_ = in_file_order(net_.input_names(), "in");
    output_blobs_ = in_file_order(net_.output_names(), "out");
    if (input_blobs_.size() != inputs_.size() || output_blobs_.size() != outputs_.size())
      throw Error("cannot load " + model.string() + ": it has " + std::to_string(input_blobs_.size()) + " inputs and " +
                  std::to_string(output_blobs_.size()) + " outputs, its manifest " + std::to_string(inputs_.size()) + " and " +
                  std::to_string(outputs_.size()));
  }

  // One extraction on zeros of the manifest's shapes (dynamic dimensions at 1), untimed.
  void warm_up() {
    auto extractor = net_.create_extractor();
    std::vector<ncnn::Mat> zeros;
    for (const auto& spec : inputs_) {
      auto shape = spec.shape;
      for (auto& d : shape) d = d < 0 ? 1 : d;
      Tensor tensor{spec.name, DType::kFloat32, shape, {}};
      tensor.data.resize(element_count(shape) * sizeof(float));
      zeros.push_back(to_mat(tensor, 0));
    }
    for (std::size_t i = 0; i < zeros.size(); ++i) extractor.input(input_blobs_[i].c_str(), zeros[i]);
    ncnn::Mat out;
    extractor.extract(output_blobs_.front().c_str(), out);
  }

  // How a batch ran, replaced when inputs are bound again.
  void batch_setting(std::int64_t batch) {
    std::erase_if(settings_, [](const EffectiveSetting& s) { return s.key == "batch_execution"; });
    settings_.push_back(
        {"batch_execution", "", batch == 1 ? "one extraction" : std::to_string(batch) + " extractions in a row",
         SettingState::kVerified,
         batch == 1 ? "" : "ncnn has no batch axis: a batch of N is N samples extracted one after another in the timed call"});
  }

  // ncnn sizes its OpenMP team per parallel region from opt.num_threads; `started`: the workers
  // that appeared while loading and warming up (in a process whose OpenMP pool already ran, none
  // start, and the count cannot tell).
  static EffectiveSetting threads_setting(int requested, int configured, const std::optional<int>& started) {
    if (started && (*started > 0 || configured == 1))
      return counted_pool_threads(requested, *started, "ncnn's OpenMP team (loading and one extraction)",
                                  requested > 0 ? "" : "ncnn's default: the physical big cores");
    return unverified_threads(requested, std::to_string(configured),
                              "opt.num_threads set; this process's OpenMP pool already ran, so no new workers could be counted");
  }

  static std::string isa_text() {
    std::string isa = "x86";
    if (ncnn::cpu_support_x86_avx()) isa = "AVX";
    if (ncnn::cpu_support_x86_fma()) isa = "AVX2/FMA";
    if (ncnn::cpu_support_x86_avx512()) isa = "AVX-512";
    if (ncnn::cpu_support_arm_asimdhp()) isa = "ARM fp16";
    return isa;
  }

  ncnn::Net net_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<std::string> input_blobs_, output_blobs_;
  std::vector<std::vector<std::vector<ncnn::Mat>>> slot_inputs_, slot_outputs_;  // [slot][sample][tensor]
  std::vector<EffectiveSetting> settings_;
};

class NcnnBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return declared_backend_info(kName, ncnn_version(), {"cpu"}, "ncnn built from PyPI's ncnn sdist (CPU, OpenMP, no Vulkan)",
                                 {});
  }
  BackendCapabilities capabilities() const override { return {}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    return std::make_unique<NcnnSession>(model, options);
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::NcnnBackend)

// OpenVINO backend (C++ runtime): reads ONNX or IR, reshapes dynamic models to the concrete
// input shapes before compiling (as benchmark_app does with -shape), binds host buffers as
// zero-copy input tensors, and reports the streams/threads/precision OpenVINO really chose.
#include <openvino/openvino.hpp>

#include <cstring>
#include <map>
#include <optional>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/options.hpp"
#include "backends/plugin.hpp"
#include "backends/thread_count.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

constexpr const char* kName = "openvino";

const std::vector<OptionDoc> kOptions{
    {"performance_hint", "latency|throughput", "latency (throughput when the scenario runs parallel requests)",
     "OpenVINO's performance hint"},
    {"streams", "N", "chosen by the hint", "CPU streams (parallel inference pipelines)"},
    {"pinning", "on|off", "chosen by OpenVINO", "pin inference threads to cores"},
    {"shape_mode", "dynamic|per-shape", "per-shape for bucketed --shape-range, else dynamic",
     "varying shapes: one dynamic-shape compilation, or one static compilation per distinct shape"}};

DType to_dtype(const ov::element::Type& type, const std::string& tensor) {
  if (type == ov::element::f32) return DType::kFloat32;
  if (type == ov::element::f16) return DType::kFloat16;
  if (type == ov::element::bf16) return DType::kBFloat16;
  if (type == ov::element::f64) return DType::kFloat64;
  if (type == ov::element::i8) return DType::kInt8;
  if (type == ov::element::u8) return DType::kUInt8;
  if (type == ov::element::i16) return DType::kInt16;
  if (type == ov::element::i32) return DType::kInt32;
  if (type == ov::element::i64) return DType::kInt64;
  if (type == ov::element::boolean) return DType::kBool;
  throw Error("tensor '" + tensor + "' has OpenVINO element type " + type.get_type_name() + ", which infermark cannot feed");
}

ov::element::Type to_element(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ov::element::f32;
    case DType::kFloat16:
      return ov::element::f16;
    case DType::kBFloat16:
      return ov::element::bf16;
    case DType::kFloat64:
      return ov::element::f64;
    case DType::kInt8:
      return ov::element::i8;
    case DType::kUInt8:
      return ov::element::u8;
    case DType::kInt16:
      return ov::element::i16;
    case DType::kInt32:
      return ov::element::i32;
    case DType::kInt64:
      return ov::element::i64;
    case DType::kBool:
      return ov::element::boolean;
  }
  return ov::element::dynamic;
}

TensorSpec to_spec(const ov::Output<const ov::Node>& port) {
  const auto name = port.get_any_name();
  TensorSpec spec{name, to_dtype(port.get_element_type(), name), {}, {}};
  for (const auto& dim : port.get_partial_shape()) {
    spec.shape.push_back(dim.is_static() ? dim.get_length() : kDynamicDim);
    spec.dim_names.emplace_back();
  }
  return spec;
}

ov::element::Type parse_precision(const std::string& precision) {
  if (precision == "fp32") return ov::element::f32;
  if (precision == "bf16") return ov::element::bf16;
  if (precision == "fp16") return ov::element::f16;
  throw Error("--precision " + precision + ": backend 'openvino' supports fp32, bf16 and fp16");
}

ov::hint::PerformanceMode parse_hint(const std::string& hint) {
  if (hint == "latency") return ov::hint::PerformanceMode::LATENCY;
  if (hint == "throughput") return ov::hint::PerformanceMode::THROUGHPUT;
  throw Error("--opt performance_hint=" + hint + ": backend 'openvino' expects latency or throughput");
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

ov::Core& shared_core() {
  static ov::Core core;
  return core;
}

class OpenVinoSession final : public Session {
 public:
  OpenVinoSession(const std::filesystem::path& model, const SessionOptions& options) : options_(options) {
    check_option_keys(kName, options.extras, kOptions);
    if (options.device != "cpu")
      throw Error("--device " + options.device + ": backend 'openvino' is built for the CPU device only here");
    parse_hint(option_or(options.extras, "performance_hint", "latency"));
    parse_precision(options.precision);
    model_ = shared_core().read_model(model.string());
    for (const auto& port : model_->inputs()) inputs_.push_back(to_spec(port));
    for (const auto& port : model_->outputs()) outputs_.push_back(to_spec(port));
    bool dynamic = false;
    for (const auto& spec : inputs_) dynamic = dynamic || spec.is_dynamic();
    if (!dynamic) compile();
  }

  SessionCapabilities capabilities() const override { return {.in_place_inputs = true, .varying_shapes = true}; }
  const std::vector<TensorSpec>& input_specs() const override { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const override { return outputs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots < 1 || slots > max_slots()) throw Error("openvino: " + std::to_string(slots) + " request slots requested");
    reshape_to(inputs);
    bound_inputs_ = inputs;  // OpenVINO tensors below wrap these buffers without copying
    requests_.clear();
    for (int s = 0; s < slots; ++s) {
      requests_.push_back(compiled_->create_infer_request());
      for (std::size_t i = 0; i < bound_inputs_.size(); ++i) {
        auto& tensor = bound_inputs_[i];
        requests_.back().set_input_tensor(
            i, ov::Tensor(to_element(tensor.dtype), ov::Shape(tensor.shape.begin(), tensor.shape.end()), tensor.data.data()));
      }
    }
  }

  // Varying shapes: the model compiled once with its dynamic dimensions, or (shape_mode=per-shape,
  // OpenVINO's remedy for a few known shapes) once per distinct shape with static dimensions; one
  // infer request per (slot, set) wrapping that set's buffers, so the timed call is infer() alone.
  void set_input_sets(const std::vector<std::vector<Tensor>>& sets, int slots, bool few_shapes) override {
    if (slots < 1 || slots > max_slots()) throw Error("openvino: " + std::to_string(slots) + " request slots requested");
    const auto mode = option_or(options_.extras, "shape_mode", few_shapes ? "per-shape" : "dynamic");
    if (mode != "dynamic" && mode != "per-shape")
      throw Error("--opt shape_mode=" + mode + ": backend 'openvino' expects dynamic or per-shape");
    input_sets_ = sets;
    std::map<std::vector<std::vector<std::int64_t>>, std::shared_ptr<ov::CompiledModel>> by_shape;
    if (mode == "dynamic") by_shape[{}] = std::make_shared<ov::CompiledModel>(compile_model(model_));
    set_requests_.assign(static_cast<std::size_t>(slots), {});
    for (auto& set : input_sets_) {
      std::vector<std::vector<std::int64_t>> shapes;
      for (const auto& tensor : set) shapes.push_back(tensor.shape);
      auto& compiled = by_shape[mode == "dynamic" ? decltype(shapes){} : shapes];
      if (!compiled) {
        auto model = model_->clone();
        std::map<std::size_t, ov::PartialShape> static_shapes;
        for (std::size_t i = 0; i < shapes.size(); ++i)
          static_shapes[i] = ov::PartialShape(std::vector<ov::Dimension>(shapes[i].begin(), shapes[i].end()));
        model->reshape(static_shapes);
        compiled = std::make_shared<ov::CompiledModel>(compile_model(model));
      }
      for (auto& requests : set_requests_) {
        requests.push_back(compiled->create_infer_request());
        for (std::size_t i = 0; i < set.size(); ++i)
          requests.back().set_input_tensor(
              i, ov::Tensor(to_element(set[i].dtype), ov::Shape(set[i].shape.begin(), set[i].shape.end()), set[i].data.data()));
      }
    }
    compiled_ = *by_shape.begin()->second;  // for the effective settings, which every compilation shares
    set_models_.clear();
    for (auto& [shape, compiled] : by_shape) set_models_.push_back(compiled);
    reshaped_to_ = "varying shapes (see shape_mode)";
    record_effective_settings();
    settings_.push_back({"shape_mode", option_or(options_.extras, "shape_mode", ""),
                         mode == "dynamic" ? "one dynamic-shape compilation"
                                           : "static compilation per shape (" + std::to_string(by_shape.size()) + " shapes)",
                         SettingState::kUnverified, ""});
  }

  void run_set(int slot, std::size_t set) override {
    set_requests_[static_cast<std::size_t>(slot)][set].infer();
    if (slot == 0) last_set_ = set;
  }

  // One compiled model, one infer request per slot: OpenVINO's own way to serve parallel requests.
  void run(int slot) override { requests_[static_cast<std::size_t>(slot)].infer(); }
  int max_slots() const override { return 1024; }

  void overwrite_input(std::size_t index, std::span<const std::byte> data) override {
    overwrite_data(bound_inputs_.at(index), data);  // every infer request's input tensor wraps this buffer
  }

  std::vector<Tensor> outputs() override {
    return copy_outputs(set_requests_.empty() ? requests_.at(0) : set_requests_.at(0).at(last_set_));
  }

  // Serving: one static compilation per distinct set of input shapes (in practice a batch size),
  // kept, so a dynamic batcher's changing batch sizes do not recompile at every change.
  std::vector<Tensor> infer(const std::vector<Tensor>& inputs) override {
    std::vector<std::vector<std::int64_t>> shapes;
    for (const auto& tensor : inputs) shapes.push_back(tensor.shape);
    auto found = serve_shapes_.find(shapes);
    if (found == serve_shapes_.end()) {
      auto model = model_->clone();
      std::map<std::size_t, ov::PartialShape> static_shapes;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        static_shapes[i] = ov::PartialShape(std::vector<ov::Dimension>(shapes[i].begin(), shapes[i].end()));
      model->reshape(static_shapes);
      auto compiled = compile_model(model);
      auto request = compiled.create_infer_request();
      found = serve_shapes_.emplace(shapes, ServeShape{std::move(compiled), std::move(request)}).first;
      if (!compiled_) {
        compiled_ = found->second.compiled;
        record_effective_settings();
      }
    }
    auto& request = found->second.request;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      request.set_input_tensor(i,
                               ov::Tensor(to_element(inputs[i].dtype), ov::Shape(inputs[i].shape.begin(), inputs[i].shape.end()),
                                          const_cast<std::byte*>(inputs[i].data.data())));
    request.infer();
    return copy_outputs(request);
  }

  std::vector<EffectiveSetting> effective_settings() const override { return settings_; }

 private:
  // Dynamic models are compiled for the exact shapes fed: OpenVINO's static-shape path is what
  // its own benchmark_app measures, and it is markedly faster than dynamic execution.
  void reshape_to(const std::vector<Tensor>& inputs) {
    bool needs_compile = !compiled_.has_value();
    std::map<std::size_t, ov::PartialShape> shapes;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      ov::PartialShape shape(std::vector<ov::Dimension>(inputs[i].shape.begin(), inputs[i].shape.end()));
      shapes[i] = shape;
      if (model_->input(i).get_partial_shape() != shape) needs_compile = true;
    }
    if (!needs_compile) return;
    model_->reshape(shapes);
    reshaped_to_ = inputs.empty() ? "" : format_shape(inputs[0].shape);
    compile();
  }

  void compile() {
    compiled_ = compile_model(model_);
    record_effective_settings();
  }

  ov::CompiledModel compile_model(const std::shared_ptr<ov::Model>& model) {
    // Parallel clients get the THROUGHPUT hint sized to them, as benchmark_app does; one client gets LATENCY.
    const auto hint =
        option_or(options_.extras, "performance_hint", options_.expected_concurrency > 1 ? "throughput" : "latency");
    ov::AnyMap config{ov::hint::performance_mode(parse_hint(hint)),
                      ov::hint::inference_precision(parse_precision(options_.precision))};
    if (options_.expected_concurrency > 1)
      config.emplace(ov::hint::num_requests(static_cast<std::uint32_t>(options_.expected_concurrency)));
    if (options_.intra_op_threads > 0) config.emplace(ov::inference_num_threads(options_.intra_op_threads));
    if (auto streams = option_or(options_.extras, "streams", ""); !streams.empty())
      config.emplace(ov::num_streams(parse_count_option(kName, "streams", streams)));
    if (auto pinning = option_or(options_.extras, "pinning", ""); !pinning.empty())
      config.emplace(ov::hint::enable_cpu_pinning(parse_bool_option(kName, "pinning", pinning)));
    return shared_core().compile_model(model, "CPU", config);
  }

  void record_effective_settings() {
    const auto& c = *compiled_;
    const auto threads = c.get_property(ov::inference_num_threads);
    const auto streams = c.get_property(ov::num_streams).num;
    const auto precision = c.get_property(ov::hint::inference_precision);
    const auto mode = c.get_property(ov::hint::performance_mode);
    const auto pinning = c.get_property(ov::hint::enable_cpu_pinning);
    const auto precision_name = precision == ov::element::f32    ? "fp32"
                                : precision == ov::element::bf16 ? "bf16"
                                : precision == ov::element::f16  ? "fp16"
                                                                 : precision.get_type_name();
    const auto asked = [&](const char* key) { return option_or(options_.extras, key, ""); };
    const auto asked_pinning = asked("pinning").empty()                                ? ""
                               : parse_bool_option(kName, "pinning", asked("pinning")) ? "on"
                                                                                       : "off";
    const std::string from_compiled = "read back from the compiled model";
    settings_ = {
        observed_threads(options_.intra_op_threads, static_cast<int>(threads), "ov::inference_num_threads, " + from_compiled),
        {"precision", options_.precision, precision_name,
         options_.precision == precision_name ? SettingState::kVerified : SettingState::kNotApplied,
         options_.precision == precision_name ? "" : "the CPU plugin does not support the requested precision here"},
        read_back("performance_hint", asked("performance_hint"), lower(ov::util::to_string(mode)), from_compiled),
        read_back("streams", asked("streams"), std::to_string(streams), from_compiled),
        read_back("pinning", asked_pinning, pinning ? "on" : "off", from_compiled),
        {"device", options_.device, "CPU", SettingState::kUnverified, ""},
        no_inter_op_threads(options_.inter_op_threads, "OpenVINO has no inter-op thread setting; use --opt streams=N"),
        {"static_reshape", "", reshaped_to_.empty() ? "model already static" : "compiled for " + reshaped_to_,
         SettingState::kUnverified, ""},
    };
  }

  std::vector<Tensor> copy_outputs(ov::InferRequest& request) const {
    std::vector<Tensor> result;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const auto out = request.get_output_tensor(i);
      const auto& shape = out.get_shape();
      Tensor tensor{outputs_[i].name,
                    to_dtype(out.get_element_type(), outputs_[i].name),
                    std::vector<std::int64_t>(shape.begin(), shape.end()),
                    {}};
      tensor.data.resize(out.get_byte_size());
      std::memcpy(tensor.data.data(), out.data(), tensor.data.size());
      result.push_back(std::move(tensor));
    }
    return result;
  }

  struct ServeShape {
    ov::CompiledModel compiled;
    ov::InferRequest request;
  };

  SessionOptions options_;
  std::map<std::vector<std::vector<std::int64_t>>, ServeShape> serve_shapes_;  // infer(): one per shape set
  std::shared_ptr<ov::Model> model_;
  std::optional<ov::CompiledModel> compiled_;
  std::vector<ov::InferRequest> requests_;
  std::vector<std::vector<Tensor>> input_sets_;                 // varying shapes: every input set
  std::vector<std::shared_ptr<ov::CompiledModel>> set_models_;  // the compilations their requests come from
  std::vector<std::vector<ov::InferRequest>> set_requests_;     // [slot][set]
  std::size_t last_set_ = 0;                                    // the set slot 0 ran last
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<Tensor> bound_inputs_;
  std::string reshaped_to_;
  std::vector<EffectiveSetting> settings_;
};

class OpenVinoBackend final : public Backend {
 public:
  BackendInfo info() const override {
    const auto version = ov::get_openvino_version();
    return declared_backend_info(kName, version.buildNumber, {"cpu"},
                                 "C++ runtime from the PyPI wheel 'openvino' (its bundled C++ libraries and headers)", kOptions);
  }

  BackendCapabilities capabilities() const override { return {.generators = false}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    try {
      return std::make_unique<OpenVinoSession>(model, options);
    } catch (const ov::Exception& e) {
      throw Error("cannot load " + model.string() + ": " + cause_of(e.what()));
    }
  }

 private:
  // OpenVINO exceptions carry a multi-line trace of source locations ("Exception from x.cpp:84:",
  // "Check '...' failed at y.cpp:47:"); the other lines, joined, are the cause. The first alone is
  // often only the step ("Loading input model", "FrontEnd API failed with GeneralFailure:") and the
  // reason is on the next line ("Input tensor isn't found for node ...", "Model can't be parsed").
  static std::string cause_of(const std::string& text) {
    std::string result;
    std::size_t pos = 0;
    while (pos <= text.size()) {
      auto end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      auto line = text.substr(pos, end - pos);
      const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
      line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
      if (!line.empty() && line.find("Exception from") == std::string::npos && line.find(".cpp:") == std::string::npos)
        result += (result.empty() ? "" : result.back() == ':' ? " " : ": ") + line;
      pos = end + 1;
    }
    return result.empty() ? text : result;
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::OpenVinoBackend)

#include "pipeline/pipeline_stage.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"
#include "result/result_builders.hpp"

namespace infermark::pipeline {
namespace {

nlohmann::json specs_json(const std::vector<TensorSpec>& specs) {
  auto out = nlohmann::json::array();
  for (const auto& s : specs) out.push_back({{"name", s.name}, {"dtype", dtype_name(s.dtype)}, {"shape", s.shape}});
  return out;
}

std::vector<TensorSpec> specs_from(const nlohmann::json& j) {
  std::vector<TensorSpec> specs;
  for (const auto& s : j) {
    TensorSpec spec{s.at("name"), parse_dtype(s.at("dtype").get<std::string>()), s.at("shape"), {}};
    spec.dim_names.assign(spec.shape.size(), "");
    specs.push_back(spec);
  }
  return specs;
}

std::string describe(DType dtype, const std::vector<std::int64_t>& shape) {
  return std::string(dtype_name(dtype)) + " " + format_shape(shape);
}

// Each file tensor cut along its first axis: sample i of every input, each with a first axis of 1.
std::vector<std::vector<Tensor>> split_samples(const std::vector<Tensor>& inputs) {
  const auto count = inputs.empty() || inputs.front().shape.empty() ? 1 : inputs.front().shape.front();
  std::vector<std::vector<Tensor>> samples(static_cast<std::size_t>(count));
  for (const auto& t : inputs) {
    if (t.shape.empty() || t.shape.front() != count)
      throw Error("input '" + t.name + "' is " + format_shape(t.shape) + ": every input file needs the same " +
                  std::to_string(count) + " samples along its first axis");
    const auto bytes = t.data.size() / static_cast<std::size_t>(count);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      Tensor one{t.name, t.dtype, t.shape, {}};
      one.shape.front() = 1;
      const auto* begin = t.data.data() + i * bytes;
      one.data.assign(begin, begin + bytes);
      samples[i].push_back(std::move(one));
    }
  }
  return samples;
}

}  // namespace

nlohmann::json to_json(const StageDescription& stage) {
  const nlohmann::json settings = stage.effective_settings;  // an array, empty or not
  return {{"name", stage.name},
          {"model", stage.model},
          {"backend", {{"name", stage.backend.name}, {"framework", stage.backend.framework}, {"version", stage.backend.version}}},
          {"effective_settings", settings},
          {"load_ms", stage.load_ms},
          {"inputs", specs_json(stage.inputs)},
          {"outputs", specs_json(stage.outputs)},
          {"input_binding", stage.input_binding}};
}

StageDescription stage_description_from_json(const nlohmann::json& j) {
  StageDescription stage;
  stage.name = j.at("name");
  stage.model = j.at("model");
  const auto& b = j.at("backend");
  stage.backend.name = b.at("name");
  stage.backend.framework = b.at("framework");
  stage.backend.version = b.at("version");
  stage.effective_settings = j.at("effective_settings").get<std::vector<EffectiveSetting>>();
  stage.load_ms = j.at("load_ms");
  stage.inputs = specs_from(j.at("inputs"));
  stage.outputs = specs_from(j.at("outputs"));
  stage.input_binding = j.at("input_binding");
  return stage;
}

PipelineStage::PipelineStage(const BackendRegistry& registry, const StageSpec& spec, int index, const StageInputs& inputs,
                             std::string previous, std::optional<TextCropSettings> crops_after)
    : index_(index), previous_(std::move(previous)), crops_after_(crops_after), fed_by_(inputs.fed_by) {
  const std::string where = "stage '" + spec.name + "' (" + spec.model.string() + " on " + spec.backend + ")";
  try {
    result::check_model_file(spec.model);
    backend_ = registry.load(spec.backend);
    const auto start = mono_now_ns();
    session_ = (*backend_)->open(spec.model, spec.options);
    description_.load_ms = static_cast<double>(mono_now_ns() - start) * 1e-6;
    auto request = inputs.request;
    const auto specs = session_->input_specs();
    if (inputs.first_input_shape && !specs.empty()) request.shape_overrides[specs.front().name] = *inputs.first_input_shape;
    bound_ = generate_inputs(specs, request);
    if (!request.files.empty()) {
      samples_ = split_samples(bound_);
      bound_ = samples_.front();
    }
    session_->set_inputs(bound_, 1);
    in_place_ = !bound_.empty() && session_->capabilities().in_place_inputs;
    session_->run(0);  // lazy initialisation happens here, untimed
    PipelineMessage first;
    hand_over(first);
    first_outputs_ = std::move(first.tensors);
  } catch (const std::exception& e) {
    throw Error(where + ": " + e.what());
  }
  description_.name = spec.name;
  description_.model = spec.model.string();
  description_.backend = (*backend_)->info();
  description_.effective_settings = session_->effective_settings();
  description_.inputs = session_->input_specs();
  description_.outputs = session_->output_specs();
  const auto per_request = in_place_ ? "in place" : "rebound per request";
  description_.input_binding = index > 0 ? per_request
                               : samples_.size() > 1
                                   ? "first stage: the next sample of its input files, " + std::string(per_request)
                                   : "first stage: bound once";
}

PipelineStage::~PipelineStage() = default;

std::uint32_t PipelineStage::select_sample(std::uint64_t request) {
  if (samples_.size() < 2) return 0;
  const auto next = static_cast<std::size_t>(request % samples_.size());
  if (next != current_sample_) {
    current_sample_ = next;
    bind(views_of(samples_[next]));
  }
  return static_cast<std::uint32_t>(next);
}

void PipelineStage::hand_over(PipelineMessage& message) {
  message.tensors = session_->outputs();
  if (!crops_after_) return;
  const auto& image = samples_.empty() ? bound_ : samples_[current_sample_];
  if (image.empty() || message.tensors.empty())
    throw Error("stage '" + description_.name + "': the text-crops handoff needs an image input and a probability map output");
  auto crops = crop_text_lines(views_of(image).front(), views_of(message.tensors).front(), *crops_after_);
  message.text_lines = crops.count;
  message.tensors.clear();
  message.tensors.push_back(std::move(crops.lines));
}

void PipelineStage::bind(const std::vector<TensorView>& inputs) {
  if (in_place_) {
    for (std::size_t i = 0; i < inputs.size(); ++i) session_->overwrite_input(i, inputs[i].data);
    return;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) overwrite_data(bound_[i], inputs[i].data);
  session_->set_inputs(bound_, 1);
}

void PipelineStage::feed(const std::vector<TensorView>& inputs) {
  if (inputs.size() != bound_.size())
    throw Error("stage '" + description_.name + "' takes " + std::to_string(bound_.size()) + " inputs but stage '" + previous_ +
                "' hands over " + std::to_string(inputs.size()) + " outputs (handoff: " + std::string(name_of(fed_by_)) + ")");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    const auto& bound = bound_[i];
    if (in.dtype != bound.dtype || in.shape != bound.shape)
      throw Error("stage '" + description_.name + "': input " + std::to_string(i) + " '" + bound.name + "' is " +
                  describe(bound.dtype, bound.shape) + " but stage '" + previous_ + "' hands over '" + in.name + "' " +
                  describe(in.dtype, in.shape) + " (handoff: " + std::string(name_of(fed_by_)) + ")");
  }
  bind(inputs);
}

}  // namespace infermark::pipeline

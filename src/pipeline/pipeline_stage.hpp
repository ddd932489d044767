// One stage of a pipeline in the calling process: its backend and session, loaded and bound
// once; then, per request, the previous stage's tensors are written into the bound inputs (in
// place where the framework allows, so no rebinding), inference runs and outputs are fetched.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "backends/registry.hpp"
#include "pipeline/pipeline_message.hpp"
#include "pipeline/pipeline_spec.hpp"

namespace infermark::pipeline {

// What a stage really ran: recorded in the result for each stage.
struct StageDescription {
  std::string name;
  std::string model;
  BackendInfo backend;
  std::vector<EffectiveSetting> effective_settings;
  double load_ms = 0;
  std::vector<TensorSpec> inputs, outputs;
  // "first stage: bound once", "in place" (overwrite_input: the session declares in_place_inputs)
  // or "rebound per request" (set_inputs).
  std::string input_binding;
};

nlohmann::json to_json(const StageDescription& stage);
StageDescription stage_description_from_json(const nlohmann::json& json);

class PipelineStage {
 public:
  // Loads the backend and the model, binds `inputs` (seeded data, or the first stage's input
  // files, whose samples requests take in turn) and runs once untimed. With `crops_after`, the
  // stage hands on text-line crops of its image instead of its outputs. Throws infermark::Error
  // naming the stage, model and backend on failure. `previous` names the stage that feeds this one
  // ("" for the first), for error messages.
  PipelineStage(const BackendRegistry& registry, const StageSpec& spec, int index, const StageInputs& inputs,
                std::string previous, std::optional<TextCropSettings> crops_after = std::nullopt);
  ~PipelineStage();

  int index() const { return index_; }
  const StageDescription& description() const { return description_; }
  // What the untimed first run handed on: their sizes size the shared-memory slots.
  const std::vector<Tensor>& first_outputs() const { return first_outputs_; }
  // Samples of the first stage's input files (1 when inputs are seeded or a file holds one).
  std::size_t samples() const { return samples_.empty() ? 1 : samples_.size(); }

  // The first stage: binds the sample request `request` takes (requests take them in turn) and
  // returns its index.
  std::uint32_t select_sample(std::uint64_t request);
  // Binds the next request's inputs (not called for the first stage, whose inputs stay bound).
  // Throws infermark::Error when count, dtype or shape differ from what the stage was bound with.
  void feed(const std::vector<TensorView>& inputs);
  void infer() { session_->run(0); }
  // Puts what this stage hands on into `message`: its outputs, or the text-line crops they show.
  void hand_over(PipelineMessage& message);

 private:
  int index_;
  std::string previous_;
  StageDescription description_;
  std::unique_ptr<LoadedBackend> backend_;  // declared before the session: outlives it
  std::unique_ptr<Session> session_;
  std::vector<Tensor> bound_;
  bool in_place_ = true;
  std::vector<std::vector<Tensor>> samples_;  // the first stage's input files, one sample each
  std::size_t current_sample_ = 0;
  std::optional<TextCropSettings> crops_after_;
  Handoff fed_by_ = Handoff::kDirect;

  void bind(const std::vector<TensorView>& inputs);  // overwrites the bound inputs with `inputs`
  std::vector<Tensor> first_outputs_;
};

}  // namespace infermark::pipeline

// One stage of a pipeline in the calling process: its backend and session, loaded and bound
// once; then, per request, the previous stage's tensors are written into the bound inputs (in
// place where the framework allows, so no rebinding), inference runs and outputs are fetched.
#pragma once

#include <memory>
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
  // Loads the backend and the model, binds seeded inputs (`inputs` gives batch and seed) and
  // runs once untimed. Throws infermark::Error naming the stage, model and backend on failure.
  // `previous` names the stage that feeds this one ("" for the first), for error messages.
  PipelineStage(const BackendRegistry& registry, const StageSpec& spec, int index, const InputRequest& inputs,
                std::string previous);
  ~PipelineStage();

  int index() const { return index_; }
  const StageDescription& description() const { return description_; }
  // Outputs of the untimed first run: their sizes size the shared-memory slots.
  const std::vector<Tensor>& first_outputs() const { return first_outputs_; }

  // Binds the next request's inputs (not called for the first stage, whose inputs stay bound).
  // Throws infermark::Error when count, dtype or shape differ from what the stage was bound with.
  void feed(const std::vector<TensorView>& inputs);
  void infer() { session_->run(0); }
  std::vector<Tensor> fetch() { return session_->outputs(); }

 private:
  int index_;
  std::string previous_;
  StageDescription description_;
  std::unique_ptr<LoadedBackend> backend_;  // declared before the session: outlives it
  std::unique_ptr<Session> session_;
  std::vector<Tensor> bound_;
  bool in_place_ = true;
  std::vector<Tensor> first_outputs_;
};

}  // namespace infermark::pipeline

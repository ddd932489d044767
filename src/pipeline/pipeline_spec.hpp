// What a pipeline run measures: the stages (model, backend, threads), how one stage's outputs
// feed the next, the modes to compare and the load. Read from a pipeline file by the CLI; passed
// to stage worker processes as JSON.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/input_generator.hpp"
#include "pipeline/text_check.hpp"
#include "pipeline/text_crops.hpp"
#include "result/pipeline_mode.hpp"

namespace infermark::pipeline {

struct StageSpec {
  std::string name;  // "encoder", "detection"; defaults to "stage<N>"
  std::filesystem::path model;
  std::string backend;
  SessionOptions options;  // threads, precision, --opt extras
};

using result::PipelineMode;

// How stage N's outputs become stage N+1's inputs.
// direct: in order, same dtypes and shapes.
// text-crops: an OCR detector's image and probability map become the recogniser's line crops
// (text_crops.hpp); the pipeline then has exactly two stages.
enum class Handoff { kDirect, kTextCrops };

std::string_view name_of(Handoff handoff);  // "direct", "text-crops"
// Throws infermark::Error naming `what` for an unknown name.
Handoff parse_handoff(const std::string& text, const std::string& what);

struct PipelineSpec {
  std::string name = "pipeline";
  std::string description;
  std::vector<StageSpec> stages;
  Handoff handoff = Handoff::kDirect;
  TextCropSettings text_crops;  // handoff text-crops only
  std::vector<PipelineMode> modes = result::every_pipeline_mode();
  int requests = 100;     // timed requests per mode
  int warmup = 5;         // untimed requests first (no timeout applies)
  int queue_depth = 2;    // capacity of each queue / shared-memory ring between stages
  double timeout_ms = 0;  // per request, end to end; 0 = none
  int breaker_after = 5;  // consecutive timeouts that open the circuit breaker; 0 = never
  double breaker_cooldown_ms = 1000;
  // Stage 1's inputs: batch and seed, or files (`input:`), whose samples (first axis) requests
  // take in turn, each request one sample.
  InputRequest inputs;
  std::optional<TextCheckSpec> text_check;  // recognised text against the input images' labels
};

// What stage `k` is bound with at load: stage 1 the pipeline's inputs; a later stage seeded data of
// the pipeline's batch and seed, its first input shaped as the previous stage hands over where a
// handoff fixes that shape (text-crops: the recogniser's line crops).
struct StageInputs {
  InputRequest request;
  std::optional<std::vector<std::int64_t>> first_input_shape;
  Handoff fed_by = Handoff::kDirect;  // how the previous stage's outputs become these inputs
};
StageInputs stage_inputs(const PipelineSpec& spec, std::size_t k);
// For a stage worker's configuration; the reader throws infermark::Error naming `source`.
nlohmann::json to_json(const StageInputs& inputs);
StageInputs stage_inputs_from_json(const nlohmann::json& json, const std::string& source);
// The text-crop settings stage `k` hands its outputs on with, if it does.
std::optional<TextCropSettings> crops_after(const PipelineSpec& spec, std::size_t k);

// Throws infermark::Error naming `source` and the field for an impossible spec (no stages,
// unknown mode or handoff, non-positive counts, too many stages).
void validate(const PipelineSpec& spec, const std::string& source);

nlohmann::json to_json(const StageSpec& stage);
StageSpec stage_from_json(const nlohmann::json& json);
nlohmann::json to_json(const PipelineSpec& spec);  // what the result records as requested

}  // namespace infermark::pipeline

// What a pipeline run measures: the stages (model, backend, threads), how one stage's outputs
// feed the next, the modes to compare and the load. Read from a pipeline file by the CLI; passed
// to stage worker processes as JSON.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/input_generator.hpp"
#include "result/pipeline_mode.hpp"

namespace infermark::pipeline {

struct StageSpec {
  std::string name;  // "encoder", "detection"; defaults to "stage<N>"
  std::filesystem::path model;
  std::string backend;
  SessionOptions options;  // threads, precision, --opt extras
};

using result::PipelineMode;

struct PipelineSpec {
  std::string name = "pipeline";
  std::string description;
  std::vector<StageSpec> stages;
  // How stage N's outputs become stage N+1's inputs. "direct": in order, same dtypes and shapes.
  std::string handoff = "direct";
  std::vector<PipelineMode> modes = result::every_pipeline_mode();
  int requests = 100;     // timed requests per mode
  int warmup = 5;         // untimed requests first (no timeout applies)
  int queue_depth = 2;    // capacity of each queue / shared-memory ring between stages
  double timeout_ms = 0;  // per request, end to end; 0 = none
  int breaker_after = 5;  // consecutive timeouts that open the circuit breaker; 0 = never
  double breaker_cooldown_ms = 1000;
  InputRequest inputs;  // batch and seed of stage 1's inputs
};

// Throws infermark::Error naming `source` and the field for an impossible spec (no stages,
// unknown mode or handoff, non-positive counts, too many stages).
void validate(const PipelineSpec& spec, const std::string& source);

nlohmann::json to_json(const StageSpec& stage);
StageSpec stage_from_json(const nlohmann::json& json);
nlohmann::json to_json(const PipelineSpec& spec);  // what the result records as requested

}  // namespace infermark::pipeline

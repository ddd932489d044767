// A cell as requested: one backend, one model, one configuration, its inputs and scenario. The
// orchestrator hands it to a worker (result/cell_json), and every result starts from it.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/input_generator.hpp"
#include "loadgen/scenario.hpp"
#include "result/session_sharing.hpp"

namespace infermark::result {

struct CellRequest {
  std::string backend;
  std::filesystem::path model;
  SessionOptions options;
  InputRequest inputs;
  loadgen::ScenarioSpec scenario;
  std::string isolation = "in-process";
  std::filesystem::path outputs_dir;  // where to save the last run's outputs as .npy ("" = don't)
  // Lanes share one session (its weights) where the framework allows, or each gets its own
  // session ("separate": N copies, the instances study's other half).
  SessionSharing sessions = SessionSharing::kShared;
  // A remote server's cell (a study's `servers`): {url, protocol, model}, measured by the remote
  // layer instead of a backend (see remote::request_for_cell); null for in-process cells.
  nlohmann::json remote;
  // Language models: a text to measure perplexity on after the timed run ("" = none), in windows.
  std::filesystem::path perplexity_text;
  int perplexity_window = 256;
};

}  // namespace infermark::result

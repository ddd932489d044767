// A cell request as JSON: the orchestrator hands each worker process its cell in a file, so the
// worker measures exactly what was asked without re-parsing command-line flags.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "result/cell_request.hpp"

namespace infermark::result {

nlohmann::json to_json(const CellRequest& cell);
// Every field of the scenario request (also recorded in each result's scenario.parameters).
nlohmann::json scenario_json(const loadgen::ScenarioSpec& scenario);
CellRequest cell_from_json(const nlohmann::json& j);  // throws infermark::Error on a malformed cell

void write_cell(const CellRequest& cell, const std::filesystem::path& path);
CellRequest read_cell(const std::filesystem::path& path);

}  // namespace infermark::result

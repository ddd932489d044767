// How `run` and `sweep` start a worker for a cell: the cell is written beside its result file
// as JSON and the worker is this same executable.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/measure_cell.hpp"

namespace infermark::cli {

std::vector<std::string> worker_argv(const result::CellRequest& cell, const std::filesystem::path& result_path);

}  // namespace infermark::cli

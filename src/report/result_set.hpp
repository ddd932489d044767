// Loads run results for the downstream commands (report, compare, recommend) from files and
// folders, and groups them by model so numbers from different models never share a table.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

struct LoadedResult {
  result::RunResult result;
  std::string path;
};

// Each argument is a result file or a folder searched recursively for result files (the
// .outputs folders of cells are skipped, as are JSON files that are not run results). Throws
// infermark::Error naming the path: missing or unreadable path, a named file that is not a
// result, or nothing found at all.
std::vector<LoadedResult> load_results(const std::vector<std::string>& paths);

// Results grouped by model name, one group across formats (the zoo's resnet50.onnx, .xml, .pt and
// .ncnn.param are one network); where one name has files of one format in different sizes, every
// file of that name is a group of its own: "resnet50 (102146362 bytes)".
std::map<std::string, std::vector<LoadedResult>> group_by_model(const std::vector<LoadedResult>& results);

// The backend as tables name it: "onnxruntime", or "remote triton" for a remote server.
std::string backend_label(const result::RunResult& result);

// The value the user asked for `key` when the framework applied another, else "".
std::string requested_but_not_applied(const result::RunResult& result, const std::string& key);

// "onnxruntime t2" or "openvino t1 fp16 batch 8 server": what distinguishes the cell in a table.
std::string cell_label(const result::RunResult& result);

}  // namespace infermark::report

#include "report/result_set.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "report/comparison_table.hpp"

namespace infermark::report {
namespace {

namespace fs = std::filesystem;

// Folders hold other JSON too (framework profiles, study files): a file counts when its
// "schema" says it is a run result; a result that then fails validation is an error.
std::optional<result::RunResult> read_if_result(const fs::path& path) {
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (text(json, "schema") != result::kSchemaName) return std::nullopt;
  return result::run_result_from_json(json, path.string());
}

void load_folder(const fs::path& folder, std::vector<LoadedResult>& out) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it->path().extension() == ".outputs") {
      it.disable_recursion_pending();  // saved tensors and framework profiles, not results
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    if (auto result = read_if_result(f)) out.push_back({std::move(*result), f.string()});
}

}  // namespace

std::vector<LoadedResult> load_results(const std::vector<std::string>& paths) {
  std::vector<LoadedResult> results;
  for (const auto& p : paths) {
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) throw Error(p + ": no such file or folder");
    if (fs::is_directory(status)) {
      const auto before = results.size();
      load_folder(p, results);
      if (results.size() == before) throw Error(p + ": no infermark result files in this folder");
    } else {
      results.push_back({result::read_run_result(p), p});
    }
  }
  if (results.empty()) throw Error("no result files given");
  return results;
}

std::map<std::string, std::vector<LoadedResult>> group_by_model(const std::vector<LoadedResult>& results) {
  // Sizes per (name, format): one network in several formats (resnet50.onnx, .xml, .pt,
  // .ncnn.param: the zoo writes them from one export) has a size per format and stays one group;
  // two files of one name and one format but different sizes are different models.
  std::map<std::pair<std::string, std::string>, std::vector<long long>> sizes;
  std::set<std::string> colliding;
  for (const auto& r : results) {
    auto& known = sizes[{r.result.model.name, r.result.model.format}];
    // Size 0 means unknown (the file could not be read): it joins its name's group.
    if (r.result.model.size_bytes > 0 && std::find(known.begin(), known.end(), r.result.model.size_bytes) == known.end())
      known.push_back(r.result.model.size_bytes);
    if (known.size() > 1) colliding.insert(r.result.model.name);
  }
  std::map<std::string, std::vector<LoadedResult>> groups;
  for (const auto& r : results) {
    const auto& name = r.result.model.name;
    const auto key = colliding.count(name) ? name + " (" + std::to_string(r.result.model.size_bytes) + " bytes)" : name;
    groups[key].push_back(r);
  }
  return groups;
}

std::string backend_label(const result::RunResult& r) {
  // A remote server is named by what it is (Triton, llama.cpp, infermark), not only "remote".
  if (r.backend.name == "remote" && !r.backend.framework.empty()) return "remote " + r.backend.framework;
  return r.backend.name;
}

std::string requested_but_not_applied(const result::RunResult& r, const std::string& key) {
  for (const auto& s : r.effective_settings)
    if (s.key == key && !s.applied() && !s.requested.empty() && s.requested != s.effective) return s.requested;
  return "";
}

std::string cell_label(const result::RunResult& r) {
  std::string label = backend_label(r);
  const auto threads = effective_setting(r, "intra_op_threads");
  if (!threads.empty()) label += " t" + threads;
  // A framework that chose its own count (OpenVINO caps at the cores) must not make two cells
  // asked for 3 and 4 threads read alike, nor hide that the request was not applied.
  if (const auto asked = requested_but_not_applied(r, "intra_op_threads"); !asked.empty()) label += " (asked " + asked + ")";
  if (r.requested.precision != "fp32") label += " " + r.requested.precision;
  if (r.scenario.batch != 1) label += " batch " + batch_cell(r);
  if (!result::ran(r.scenario, loadgen::Scenario::kSingleStream)) label += " " + result::scenario_label(r.scenario);
  if (const auto& varying = r.scenario.parameters.varying_shapes)
    for (const auto& [name, range] : varying->ranges) label += " " + name + "=" + range;
  return label;
}

}  // namespace infermark::report

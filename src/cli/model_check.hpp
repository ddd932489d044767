// `infermark check`'s work, shared with `evaluate`'s pre-flight: whether each framework can load,
// compile and run a model once, before any benchmark; for those that cannot, the framework's own
// reason. Each (model, backend) runs in its own worker, so a framework that crashes on the model
// is a finding, not the end of the check.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "harness/run_options.hpp"
#include "result/cell_status.hpp"

namespace infermark::cli {

struct SupportQuestion {
  harness::RunOptions options;  // the model and the settings it will be measured with (shapes, inputs)
  std::string backend;
};

struct SupportAnswer {
  std::string model;  // the model file
  std::string backend;
  std::string version;  // the framework's, as the worker reported it
  result::CellStatus status = result::CellStatus::kOk;
  double load_ms = 0;
  std::optional<double> inference_ms;  // the one inference
  std::string reason;                  // why it cannot run ("" when it runs)
  bool runs() const { return status == result::CellStatus::kOk; }
};

// One inference per question (no warm-up), single stream, each in a worker writing into `folder`
// under stable names (<model file>.<backend>), so with `resume` an answer that ran is not asked again.
std::vector<SupportAnswer> check_support(const std::vector<SupportQuestion>& questions, const BackendRegistry& registry,
                                         const std::filesystem::path& folder, bool resume, const std::atomic<bool>& stop);

// The answers as a Markdown table: model, framework, version, verdict, load ms, inference ms, reason.
std::string support_table(const std::vector<SupportAnswer>& answers);

}  // namespace infermark::cli

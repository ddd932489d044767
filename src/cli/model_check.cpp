#include "cli/model_check.hpp"

#include <fmt/core.h>

#include "cli/worker_launch.hpp"
#include "core/markdown_table.hpp"
#include "harness/comparison.hpp"

namespace infermark::cli {
namespace {

// Long framework errors (a stack of nested causes) cut to what a table cell can hold.
constexpr std::size_t kMostReasonCharacters = 240;

std::string verdict_text(const SupportAnswer& a) {
  if (a.runs()) return "runs";
  if (a.status == result::CellStatus::kFailed) return a.load_ms > 0 ? "loads, fails to run" : "cannot load";
  return std::string(result::name_of(a.status));  // crashed, timeout, memory-limit, interrupted
}

}  // namespace

std::vector<SupportAnswer> check_support(const std::vector<SupportQuestion>& questions, const BackendRegistry& registry,
                                         const std::filesystem::path& folder, bool resume, const std::atomic<bool>& stop) {
  harness::ComparisonPlan plan;
  for (const auto& q : questions) {
    auto options = q.options;
    options.scenario.name = loadgen::Scenario::kSingleStream;
    options.scenario.max_queries = 1;
    options.scenario.warmup_queries = 0;
    options.concurrency.clear();
    plan.cells.push_back(harness::to_cell(options, q.backend, harness::thread_counts(options).front()));
    // The file name with its format: resnet50.onnx and resnet50.xml on OpenVINO are two answers.
    plan.cell_names.push_back(std::filesystem::path(options.model).filename().string() + "." + q.backend);
  }
  plan.output_dir = folder;
  plan.resume = resume;
  plan.cell_timeout_s =
      harness::default_cell_timeout_s(plan.cells.empty() ? loadgen::ScenarioSpec{} : plan.cells.front().scenario);
  plan.worker_argv = worker_argv;
  std::vector<SupportAnswer> answers;
  const auto outcomes = harness::run_comparison(plan, registry, stop);  // in the questions' order
  for (std::size_t i = 0; i < outcomes.size() && i < questions.size(); ++i) {
    const auto& r = outcomes[i].result;
    SupportAnswer a;
    a.model = questions[i].options.model;
    a.backend = questions[i].backend;
    a.version = r.backend.version;
    a.status = r.status;
    a.load_ms = r.timing.load_ms;
    if (r.latency_ms) a.inference_ms = r.latency_ms->max;
    a.reason = r.error.size() > kMostReasonCharacters ? r.error.substr(0, kMostReasonCharacters) + "..." : r.error;
    answers.push_back(std::move(a));
  }
  return answers;
}

std::string support_table(const std::vector<SupportAnswer>& answers) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : answers)
    rows.push_back({a.model, a.backend, a.version.empty() ? "-" : a.version, verdict_text(a),
                    a.load_ms > 0 ? format_number(a.load_ms) : "-", a.inference_ms ? format_number(*a.inference_ms) : "-",
                    a.reason.empty() ? "-" : a.reason});
  return markdown_table(
      {{"model"}, {"framework"}, {"version"}, {"verdict"}, {"load ms", true}, {"inference ms", true}, {"reason"}}, rows);
}

}  // namespace infermark::cli

#include "report/rules_of_thumb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "report/markdown_table.hpp"

namespace infermark::report {
namespace {

const CellAssessment* lowest_p99(const CellRefs& cells) {
  const CellAssessment* best = nullptr;
  for (const auto* c : cells)
    if (!best || c->figures.p99_ms < best->figures.p99_ms) best = c;
  return best;
}

const CellAssessment* highest_qps(const CellRefs& cells) {
  const CellAssessment* best = nullptr;
  for (const auto* c : cells)
    if (!best || c->figures.qps > best->figures.qps) best = c;
  return best;
}

bool uses_throughput_hint(const CellAssessment& c) {
  auto hint = c.performance_hint;
  std::transform(hint.begin(), hint.end(), hint.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return c.backend == "openvino" && hint.find("throughput") != std::string::npos;
}

RuleCheck verdict(std::string rule, bool agrees, const std::string& agreed, const std::string& contradicted) {
  return {std::move(rule), agrees ? "agrees" : "contradicted",
          agrees ? agreed : "the data contradicts the rule of thumb: " + contradicted};
}

RuleCheck latency_rule(const CellRefs& completed, bool x86) {
  const std::string name = "latency-sensitive at batch 1 on x86 -> OpenVINO or ONNX Runtime";
  if (!x86) return {name, "not applicable", "the results were not measured on an x86 CPU"};
  CellRefs batch1, picks;
  for (const auto* c : completed)
    if (c->batch == 1) {
      batch1.push_back(c);
      if (c->backend == "openvino" || c->backend == "onnxruntime") picks.push_back(c);
    }
  if (batch1.empty()) return {name, "not testable", "no completed batch-1 cell"};
  if (picks.empty()) return {name, "not testable", "neither OpenVINO nor ONNX Runtime was measured at batch 1"};
  const auto* winner = lowest_p99(batch1);
  const auto* pick = lowest_p99(picks);
  return verdict(name, winner == pick,
                 fmt::format("lowest P99 at batch 1: {} ({} ms)", winner->label, format_number(winner->figures.p99_ms)),
                 fmt::format("the lowest P99 at batch 1 is {} ({} ms); the rule's best, {}, has {} ms ({:+.1f}%)", winner->label,
                             format_number(winner->figures.p99_ms), pick->label, format_number(pick->figures.p99_ms),
                             (pick->figures.p99_ms / winner->figures.p99_ms - 1.0) * 100.0));
}

RuleCheck throughput_rule(const CellRefs& completed) {
  const std::string name = "throughput -> OpenVINO THROUGHPUT hint / larger batch";
  long long max_batch = 1;
  for (const auto* c : completed) max_batch = std::max(max_batch, c->batch);
  CellRefs picks;
  for (const auto* c : completed)
    if (uses_throughput_hint(*c) || (max_batch > 1 && c->batch == max_batch)) picks.push_back(c);
  if (picks.empty())
    return {name, "not testable",
            "no cell used OpenVINO's THROUGHPUT hint or a batch above 1; try --opt performance_hint=throughput, --batch 8, "
            "--scenario offline"};
  const auto* winner = highest_qps(completed);
  const auto* pick = highest_qps(picks);
  return verdict(name, winner == pick,
                 fmt::format("highest throughput: {} ({} inferences/s)", winner->label, format_number(winner->figures.qps)),
                 fmt::format("the highest throughput is {} ({} inferences/s); the rule's best, {}, reaches {} inferences/s",
                             winner->label, format_number(winner->figures.qps), pick->label, format_number(pick->figures.qps)));
}

// Rules that name one framework: does the recommended cell use it?
RuleCheck pick_rule(std::string name, const std::string& backend, const std::string& framework, const RuleInputs& in,
                    const std::string& caveat) {
  if (!in.winner) return {std::move(name), "not testable", "no completed cell"};
  const bool measured =
      std::any_of(in.completed.begin(), in.completed.end(), [&](const CellAssessment* c) { return c->backend == backend; });
  if (!measured) return {std::move(name), "not testable", framework + " was not measured"};
  return verdict(std::move(name), in.winner->backend == backend, fmt::format("the measured winner is {}", in.winner->label),
                 fmt::format("the measured winner is {}, not {}{}", in.winner->label, framework, caveat));
}

}  // namespace

std::vector<RuleCheck> check_rules_of_thumb(const RuleInputs& in) {
  std::vector<RuleCheck> rules{latency_rule(in.completed, in.x86), throughput_rule(in.completed)};
  const std::string dynamic = "dynamic shapes -> ONNX Runtime (OpenVINO recompiles per shape)";
  if (in.dynamic_shapes)
    rules.push_back(pick_rule(dynamic, "onnxruntime", "ONNX Runtime", in,
                              in.winner && in.winner->backend == "openvino"
                                  ? "; these runs fed one shape, so OpenVINO's recompilation per new shape is not in the numbers"
                                  : ""));
  else
    rules.push_back({dynamic, "not applicable", "pass --dynamic-shapes when the deployment feeds varying input shapes"});
  const std::string generation = "long generation -> llama.cpp";
  const bool llm = std::any_of(in.completed.begin(), in.completed.end(),
                               [](const CellAssessment* a) { return a->model_format == "gguf" || a->backend == "llamacpp"; });
  if (llm)
    rules.push_back(pick_rule(generation, "llamacpp", "llama.cpp", in, ""));
  else
    rules.push_back({generation, "not applicable", "no LLM generation results for this model"});
  return rules;
}

}  // namespace infermark::report

#include "report/recommend_constraints.hpp"

#include <fmt/format.h>

namespace infermark::report {
namespace {

using enum ConstraintKind;
using enum ConstraintRole;

struct Flag {
  ConstraintKind kind;
  ConstraintRole role;
  std::string_view flag;
  std::string_view check;
  bool llm_only;
};

// Every flag, in the order the "Constraints:" line names them.
constexpr Flag kFlags[] = {
    {kP99, kLimit, "--p99-ms", "P99", false},
    {kMinQps, kLimit, "--min-qps", "QPS", false},
    {kMemory, kLimit, "--mem-mb", "memory", false},
    {kAccuracyLoss, kLimit, "--max-accuracy-loss", "accuracy", false},
    {kPower, kLimit, "--watts", "power", false},
    {kTtft, kLimit, "--ttft-ms", "TTFT", true},
    {kTpot, kLimit, "--tpot-ms", "TPOT", true},
    {kEnergy, kPreference, "--energy", "energy", false},
    {kDynamicShapes, kSituation, "--dynamic-shapes", "", false},
    {kDomesticHardware, kSituation, "--domestic-hardware", "", false},
    {kFastIteration, kSituation, "--fast-iteration", "", false},
    {kDynamicControlFlow, kSituation, "--dynamic-control-flow", "", false},
    {kMultiBackend, kSituation, "--multi-backend", "", false},
    {kPricePerHour, kFigure, "--price-per-hour", "", false},
    {kTargetQps, kFigure, "--target-qps", "", false},
    {kModelGflops, kFigure, "--model-gflops", "", false},
};

// The flag's value when given: a number, 0 for a switch that is on, nothing otherwise.
std::optional<double> value_of(ConstraintKind kind, const Constraints& c) {
  const auto on = [](bool given) { return given ? std::optional<double>(0.0) : std::nullopt; };
  switch (kind) {
    case kP99:
      return c.p99_ms;
    case kMinQps:
      return c.min_qps;
    case kMemory:
      return c.mem_mb;
    case kAccuracyLoss:
      return c.max_accuracy_loss_pct;
    case kPower:
      return c.watts;
    case kTtft:
      return c.ttft_ms;
    case kTpot:
      return c.tpot_ms;
    case kEnergy:
      return on(c.energy);
    case kDynamicShapes:
      return on(c.dynamic_shapes);
    case kDomesticHardware:
      return on(c.domestic_hardware);
    case kFastIteration:
      return on(c.fast_iteration);
    case kDynamicControlFlow:
      return on(c.dynamic_control_flow);
    case kMultiBackend:
      return on(c.multi_backend);
    case kPricePerHour:
      return c.price_per_hour;
    case kTargetQps:
      return c.target_qps;
    case kModelGflops:
      return c.model_gflops;
  }
  return std::nullopt;
}

std::string text_of(ConstraintKind kind, double v) {
  switch (kind) {
    case kP99:
      return fmt::format("P99 <= {:g} ms", v);
    case kMinQps:
      return fmt::format("QPS >= {:g} inferences/s", v);
    case kMemory:
      return fmt::format("peak RSS <= {:g} MB", v);
    case kAccuracyLoss:
      return fmt::format(
          "accuracy loss <= {:g} (% of agreement with the reference, points of top-1 vs labels, or % of perplexity for LLM "
          "cells)",
          v);
    case kPower:
      return fmt::format("average power <= {:g} W", v);
    case kTtft:
      return fmt::format("TTFT P99 <= {:g} ms (LLM cells)", v);
    case kTpot:
      return fmt::format("TPOT P99 <= {:g} ms (LLM cells)", v);
    case kEnergy:
      return "prefer energy efficiency";
    case kDynamicShapes:
      return "dynamic input shapes";
    case kDomesticHardware:
      return "domestic hardware";
    case kFastIteration:
      return "fast iteration";
    case kDynamicControlFlow:
      return "dynamic control flow";
    case kMultiBackend:
      return "multi-backend";
    case kPricePerHour:
      return fmt::format("cost per million inferences at {:g} per hour", v);
    case kTargetQps:
      return fmt::format("machines to serve {:g} inferences/s", v);
    case kModelGflops:
      return fmt::format("{:g} GFLOP per inference", v);
  }
  return "";
}

}  // namespace

std::vector<GivenConstraint> given_constraints(const Constraints& c) {
  std::vector<GivenConstraint> given;
  for (const auto& f : kFlags)
    if (const auto v = value_of(f.kind, c))
      given.push_back({f.kind, f.role, f.flag, f.check, text_of(f.kind, *v), *v, f.llm_only});
  return given;
}

std::string constraints_text(const std::vector<GivenConstraint>& given) {
  std::vector<std::string> parts;
  for (const auto& g : given) parts.push_back(g.text);
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string limit_flags() {
  std::vector<std::string_view> flags;
  for (const auto& f : kFlags)
    if (f.role == kLimit) flags.push_back(f.flag);
  return fmt::format("{}", fmt::join(flags, ", "));
}

}  // namespace infermark::report

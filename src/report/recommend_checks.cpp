#include "report/recommend_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/markdown_table.hpp"
#include "result/cell_outcome.hpp"

namespace infermark::report {
namespace {

ConstraintCheck at_most(std::string name, const std::string& what, double value, double limit, const std::string& unit) {
  const bool met = value <= limit;
  return {std::move(name), met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("{} {} {} {} {:g} {}", what, format_number(value), unit, met ? "<=" : ">", limit, unit), value / limit,
          true};
}

std::optional<ConstraintCheck> llm_limit(const GivenConstraint& g, const std::optional<double>& p99) {
  const std::string name(g.check);
  if (p99) return at_most(name, name + " P99", *p99, g.value, "ms");
  return ConstraintCheck{name, Outcome::kUnknown, name + " cannot be judged: not recorded in the result", 0.0, true};
}

ConstraintCheck accuracy_check(const GivenConstraint& g, const CellFigures& f) {
  const std::string name(g.check);
  if (!f.accuracy_loss) return {name, Outcome::kUnknown, "accuracy loss cannot be judged: " + f.accuracy_source, 0.0, true};
  const double pct = *f.accuracy_loss * 100.0, limit = g.value;
  const bool met = pct <= limit;
  const auto unit = f.accuracy_measure == AccuracyMeasure::kLabels ? " points" : "%";
  return {name, met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("accuracy loss {:.3g}{} {} {:g}{} ({})", pct, unit, met ? "<=" : ">", limit, unit, f.accuracy_source),
          limit > 0 ? pct / limit : (pct > 0 ? std::numeric_limits<double>::infinity() : 0.0), true};
}

// What one given limit or preference says of a completed cell; nothing where it does not concern
// the cell (TTFT and TPOT judge LLM cells only) or judges no cell (situations, figures).
std::optional<ConstraintCheck> check_of(const GivenConstraint& g, const CellFigures& f) {
  if (g.llm_only && !f.generation) return std::nullopt;
  const std::string name(g.check);
  switch (g.kind) {
    case ConstraintKind::kP99:
      return at_most(name, "P99", f.p99_ms, g.value, "ms");
    case ConstraintKind::kMinQps: {
      const bool met = f.qps >= g.value;
      return ConstraintCheck{
          name, met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("QPS {} {} {:g} inferences/s ({})", format_number(f.qps), met ? ">=" : "<", g.value, f.qps_source),
          f.qps > 0 ? g.value / f.qps : std::numeric_limits<double>::infinity(), true};
    }
    case ConstraintKind::kMemory:
      if (f.peak_rss_mb > 0) return at_most(name, "peak RSS", f.peak_rss_mb, g.value, "MB");
      return ConstraintCheck{name, Outcome::kUnknown, "peak RSS cannot be judged: not recorded", 0.0, true};
    case ConstraintKind::kAccuracyLoss:
      return accuracy_check(g, f);
    case ConstraintKind::kPower:
      if (f.average_watts) return at_most(name, "average power", *f.average_watts, g.value, "W");
      return ConstraintCheck{name, Outcome::kUnknown, "power unknown: energy not measured (" + f.power_source + ")", 0.0, true};
    case ConstraintKind::kTtft:
      return llm_limit(g, f.ttft_p99_ms);
    case ConstraintKind::kTpot:
      return llm_limit(g, f.tpot_p99_ms);
    case ConstraintKind::kEnergy:  // a preference (rank by inferences per joule): unknown never excludes
      if (f.inferences_per_joule)
        return ConstraintCheck{name, Outcome::kMet, fmt::format("{:.3g} inferences/J", *f.inferences_per_joule), 0.0, false};
      return ConstraintCheck{name, Outcome::kUnknown, "energy cannot be judged: " + f.energy_source, 0.0, false};
    case ConstraintKind::kDynamicShapes:
    case ConstraintKind::kDomesticHardware:
    case ConstraintKind::kFastIteration:
    case ConstraintKind::kDynamicControlFlow:
    case ConstraintKind::kMultiBackend:
    case ConstraintKind::kPricePerHour:
    case ConstraintKind::kTargetQps:
    case ConstraintKind::kModelGflops:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::vector<ConstraintCheck> checks_for(const CellAssessment& cell, const result::RunResult& r, const Constraints& c) {
  if (!cell.completed) {
    return {{"status", Outcome::kFailed, result::failure_text(r), std::numeric_limits<double>::infinity(), true}};
  }
  std::vector<ConstraintCheck> checks;
  for (const auto& g : given_constraints(c))
    if (auto check = check_of(g, cell.figures)) checks.push_back(std::move(*check));
  return checks;
}

bool CellAssessment::meets_all() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const ConstraintCheck& c) { return !c.required || c.outcome == Outcome::kMet; });
}

std::string CellAssessment::binding() const {
  const ConstraintCheck* worst = nullptr;
  for (const auto& c : checks)
    if (c.required && c.outcome == Outcome::kFailed && (!worst || c.excess > worst->excess)) worst = &c;
  if (worst) return worst->detail;
  for (const auto& c : checks)
    if (c.required && c.outcome == Outcome::kUnknown) return c.detail;
  return "";
}

}  // namespace infermark::report

#include "report/percentile_claims.hpp"

#include <fmt/format.h>

#include "stats/histogram.hpp"

namespace infermark::report {
namespace {

std::string cell_name(const result::RunResult& r) {
  auto name = r.model.name + " on " + r.backend.name;
  if (r.generation && r.generation->concurrency > 1) name += fmt::format(" C={}", r.generation->concurrency);
  return name;
}

std::size_t sample_count(const result::RunResult& r) {
  if (r.generation) return r.generation->requests;
  return r.latency_ms ? r.latency_ms->count : 0;
}

}  // namespace

std::string percentile_claim_note(const std::vector<result::RunResult>& results) {
  const auto needed = stats::min_queries_for_percentile(kClaimPercentile, kClaimConfidence);
  std::vector<std::string> too_short, bounds;
  for (const auto& r : results) {
    const auto n = sample_count(r);
    if (r.status != result::CellStatus::kOk || n == 0) continue;
    if (n < needed) {
      too_short.push_back(
          fmt::format("{} ({}: P{:.1f} at most)", cell_name(r), n, stats::claimable_percentile(n, 0, kClaimConfidence)));
    } else if (!r.generation && r.samples_ms.size() == n) {
      if (const auto bound = stats::early_stopping_estimate(r.samples_ms, kClaimPercentile, kClaimConfidence))
        bounds.push_back(fmt::format("{} {:.3f} ms", cell_name(r), *bound));
    }
  }
  if (too_short.empty() && bounds.empty()) return "";
  std::string note =
      fmt::format("  P{:g} claims (MLPerf early stopping, {:g}% confidence, at least {} samples): ", kClaimPercentile,
                  kClaimConfidence * 100, needed);
  if (!too_short.empty()) note += fmt::format("too few samples in {}", fmt::join(too_short, ", "));
  if (!bounds.empty())
    note += fmt::format("{}true P{:g} at most {}", too_short.empty() ? "" : "; ", kClaimPercentile, fmt::join(bounds, ", "));
  return note + "\n";
}

}  // namespace infermark::report

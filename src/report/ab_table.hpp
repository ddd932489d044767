// The A/B table of a serve session: every variant of a model against its control (the variant
// with the largest traffic weight), on the live requests each served, with the same significance
// tests as `compare` (Mann-Whitney U on P50, bootstrap interval of the P99 ratio).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.hpp"
#include "report/result_set.hpp"

namespace infermark::report {

struct AbRow {
  std::string variant;
  long long requests = 0;
  MetricChange p50, p99;  // against the control's
};

struct AbComparison {
  std::string control;  // the variant with the largest weight
  long long control_requests = 0;
  std::vector<AbRow> rows;                // every other served variant; empty with fewer than two
  std::vector<std::string> shadow_notes;  // "'ov' mirrored to 'ort': 1x3x224x224: 2 of 120 disagreed ..."
  bool empty() const { return rows.empty() && shadow_notes.empty(); }
};

// The served results (origin served) among `cells`, each variant against the control, and each
// variant's shadow comparisons by input shape.
AbComparison ab_comparison(const std::vector<LoadedResult>& cells);

// As Markdown (`infermark report`); "" when no serve result has a comparison or a shadow.
std::string ab_table(const std::vector<LoadedResult>& cells);

// For the HTML report, which renders it as a sortable table.
nlohmann::json to_json(const AbComparison& comparison);

}  // namespace infermark::report

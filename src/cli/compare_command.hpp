// `infermark compare BASELINE CANDIDATE`: its flags, and the options they fill.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "report/compare.hpp"

namespace infermark::cli {

struct CompareOptions {
  std::string baseline, candidate;
  std::optional<double> fail_on_regression_pct;  // given: also the practical threshold in `settings`
  report::CompareSettings settings;
  bool as_json = false;
};

void define_compare_flags(CLI::App& cmd, CompareOptions& options);

}  // namespace infermark::cli

// `infermark recommend RESULTS...`: its flags, which fill the library's constraints directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/recommend.hpp"

namespace infermark::cli {

struct RecommendOptions {
  std::vector<std::string> results;
  report::Constraints constraints;    // every constraint flag, unset where not given
  std::optional<double> peak_gflops;  // unset: derived from this machine
  bool as_json = false;
};

void define_recommend_flags(CLI::App& cmd, RecommendOptions& options);

}  // namespace infermark::cli

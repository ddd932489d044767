// `infermark backends`: its flags, and the options they fill.
#pragma once

#include <CLI/CLI.hpp>

namespace infermark::cli {

struct BackendsOptions {
  bool as_json = false;
};

void define_backends_flags(CLI::App& cmd, BackendsOptions& options);

}  // namespace infermark::cli

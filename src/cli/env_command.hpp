// `infermark env`: its flags, and the options they fill.
#pragma once

#include <CLI/CLI.hpp>

namespace infermark::cli {

struct EnvOptions {
  bool as_json = false;
};

void define_env_flags(CLI::App& cmd, EnvOptions& options);

}  // namespace infermark::cli

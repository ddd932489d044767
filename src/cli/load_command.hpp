// `infermark load URL`: its flags, which fill the remote client's request directly.
#pragma once

#include <CLI/CLI.hpp>

#include "scaleout/load_job.hpp"

namespace infermark::cli {

using LoadOptions = scaleout::LoadJob;  // the request, the measurement flags and --out

void define_load_flags(CLI::App& cmd, LoadOptions& options);

}  // namespace infermark::cli

// `infermark serve`: its flags, and the options they fill.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "serve/serve_config.hpp"
#include "serve/serve_main.hpp"

namespace infermark::cli {

struct ServeOptions {
  std::string config_file;        // a model repository, or
  serve::SingleModelFlags model;  // one model (--model) with its variants
  // The server flags given (--host, --port, ...), each setting its field of the configuration,
  // so that they override a --config file's server section and leave the rest as the file says.
  std::vector<std::function<void(serve::ServeConfig&)>> server_settings;
  std::string out = "results";
};

void define_serve_flags(CLI::App& cmd, ServeOptions& options);

// The configuration to serve: the --config file or --model's, then the server flags given.
serve::ServeConfig serve_config(const ServeOptions& options);

}  // namespace infermark::cli

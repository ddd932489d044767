// One command's options from its arguments, through the command's own flag definitions: what
// `infermark <command> ARGS...` hands its call. The commands use the same definitions, so a test
// of this is a test of the command line.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace infermark::cli {

// `args` are what follows the command's name. Throws CLI::ParseError as the command line would
// (a missing argument, an unknown or invalid flag, flags that exclude each other).
template <class Options>
Options parse_command(void (*define_flags)(CLI::App&, Options&), const std::vector<std::string>& args) {
  Options options;
  CLI::App app;
  define_flags(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  app.parse(reversed);
  return options;
}

}  // namespace infermark::cli

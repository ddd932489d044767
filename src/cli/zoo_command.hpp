// `infermark zoo list|build`: its flags, and the arguments of the Python driver they become.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace infermark::cli {

enum class ZooAction { kNone, kList, kBuild };

struct ZooOptions {
  ZooAction action = ZooAction::kNone;                  // the subcommand given
  std::string models_dir;                               // "": the driver's default
  bool as_json = false;                                 // list
  std::vector<std::string> names, formats, precisions;  // build
  bool force = false;                                   // build
};

// Defines `zoo`'s own flags and its `list` and `build` subcommands on `cmd`.
void define_zoo_flags(CLI::App& cmd, ZooOptions& options);

// The arguments of tools/zoo/zoo.py for `options`.
std::vector<std::string> zoo_driver_arguments(const ZooOptions& options);

// tools/zoo of the source tree (INFERMARK_ZOO_DIR, else found above the executable); throws
// infermark::Error saying how to set it when not found.
std::filesystem::path zoo_directory();

// The command line of the zoo driver (the set-up venv's Python, tools/zoo/zoo.py) with `arguments`.
std::vector<std::string> zoo_driver_argv(const std::vector<std::string>& arguments);

}  // namespace infermark::cli

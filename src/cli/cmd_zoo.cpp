// `infermark zoo list|build`: the model zoo. The catalog, exporters and cache live in tools/zoo
// (Python: torch, ONNX, OpenVINO and NNCF are Python tools); this command runs its driver in the
// project's venv, replacing this process so that exit codes and Ctrl-C go straight to it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/zoo_command.hpp"
#include "core/error.hpp"

namespace infermark::cli {
namespace {

namespace fs = std::filesystem;

// tools/zoo of the source tree: INFERMARK_ZOO_DIR, else the first folder above the executable
// that holds tools/zoo/zoo.py (build trees live inside the repository).
fs::path zoo_dir() {
  if (const char* env = std::getenv("INFERMARK_ZOO_DIR"); env && *env) return env;
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  for (auto dir = ec ? fs::current_path() : exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "tools" / "zoo" / "zoo.py")) return dir / "tools" / "zoo";
    if (dir == dir.root_path()) break;
  }
  throw Error(
      "zoo: tools/zoo/zoo.py not found above the infermark executable; set INFERMARK_ZOO_DIR to the "
      "tools/zoo folder of the infermark repository");
}

// The venv scripts/setup makes (INFERMARK_PYTHON overrides it).
fs::path zoo_python(const fs::path& zoo) {
  if (const char* env = std::getenv("INFERMARK_PYTHON"); env && *env) return env;
  const auto python = zoo.parent_path().parent_path() / ".venv" / "bin" / "python";
  if (!fs::exists(python))
    throw Error("zoo: " + python.string() + " not found: run scripts/setup (it makes the Python venv the exporters run in)");
  return python;
}

[[noreturn]] void exec_driver(const std::vector<std::string>& arguments) {
  auto argv = zoo_driver_argv(arguments);
  std::vector<char*> raw;
  for (auto& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  std::fflush(nullptr);
  execv(argv.front().c_str(), raw.data());
  throw Error("zoo: cannot run " + argv.front() + ": " + std::strerror(errno));
}

}  // namespace

fs::path zoo_directory() { return zoo_dir(); }

std::vector<std::string> zoo_driver_argv(const std::vector<std::string>& arguments) {
  const auto zoo = zoo_dir();
  std::vector<std::string> argv{zoo_python(zoo).string(), (zoo / "zoo.py").string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return argv;
}

void define_zoo_flags(CLI::App& cmd, ZooOptions& o) {
  cmd.require_subcommand(1);
  cmd.add_option("--models-dir", o.models_dir, "Where the zoo keeps models and manifests (default: the repository's models/)");
  auto* list = cmd.add_subcommand("list", "Every model x format x precision, and which are built (checksums verified)");
  list->preparse_callback([&o](std::size_t) { o.action = ZooAction::kList; });
  list->add_flag("--json", o.as_json, "Print JSON instead of a table");
  auto* build = cmd.add_subcommand("build", "Export what is missing of models NAME... (cached variants are skipped)");
  build->preparse_callback([&o](std::size_t) { o.action = ZooAction::kBuild; });
  build->add_option("names", o.names, "Catalog names (see `infermark zoo list`)")->required();
  build
      ->add_option("--formats", o.formats,
                   "onnx, torchscript, openvino-ir, tflite, gguf, onnx-genai, openvino-llm (default: all the model offers)")
      ->delimiter(',');
  build->add_option("--precisions", o.precisions, "fp32, fp16, int8, q8_0, q4_0, int4 (default: all the model offers)")
      ->delimiter(',');
  build->add_flag("--force", o.force, "Rebuild even what is cached");
}

std::vector<std::string> zoo_driver_arguments(const ZooOptions& o) {
  std::vector<std::string> args;
  if (!o.models_dir.empty()) args = {"--models-dir", o.models_dir};
  if (o.action == ZooAction::kList) {
    args.push_back("list");
    if (o.as_json) args.push_back("--json");
  } else if (o.action == ZooAction::kBuild) {
    args.push_back("build");
    args.insert(args.end(), o.names.begin(), o.names.end());
    for (const auto& [flag, values] : {std::pair{"--formats", &o.formats}, std::pair{"--precisions", &o.precisions}}) {
      if (values->empty()) continue;
      args.push_back(flag);
      args.insert(args.end(), values->begin(), values->end());
    }
    if (o.force) args.push_back("--force");
  }
  return args;
}

void add_zoo_command(CLI::App& app, int& /*exit_code*/) {
  auto* cmd = app.add_subcommand("zoo", "Standard models in every format and precision, with accuracy figures (tools/zoo)");
  static ZooOptions o;
  define_zoo_flags(*cmd, o);
  cmd->callback([] { exec_driver(zoo_driver_arguments(o)); });  // after the subcommand's flags are parsed
}

}  // namespace infermark::cli

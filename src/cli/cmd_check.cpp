// `infermark check MODEL...`: before any benchmark, which built-in frameworks can load, compile and
// run each model once, and for those that cannot, the framework's reason (an unsupported operator,
// a data type, a crash), each framework in its own worker.
#include <fmt/core.h>

#include <unistd.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/model_check.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "harness/run_options.hpp"
#include "result/result_builders.hpp"

namespace infermark::cli {
namespace {

namespace fs = std::filesystem;

struct CheckOptions {
  std::vector<std::string> models;
  std::vector<std::string> backends;  // empty: every built backend that reads the model
  std::vector<std::string> shapes, shape_ranges, inputs;
  std::string out;  // "": the workers' results go to a temporary folder, removed afterwards
};

int check(const CheckOptions& o) {
  const BackendRegistry registry(default_plugin_dir());
  std::vector<SupportQuestion> questions;
  for (const auto& model : o.models) {
    result::check_model_file(model);
    const auto selection = harness::select_backends(o.backends, model, registry.available());
    for (const auto& [name, why] : selection.rejected) fmt::print(stderr, "infermark: -b {}: {}\n", name, why);
    harness::RunOptions options;
    options.model = model;
    options.shapes = o.shapes;
    options.shape_ranges = o.shape_ranges;
    options.input_files = o.inputs;
    options.threads = {0};  // each framework's own default: the check is about support, not speed
    for (const auto& backend : selection.chosen) questions.push_back({options, backend});
  }
  if (questions.empty()) throw Error("no built backend reads these models");
  const auto folder = o.out.empty() ? fs::temp_directory_path() / fmt::format("infermark-check-{}", getpid()) : fs::path(o.out);
  fs::create_directories(folder);
  const auto answers = check_support(questions, registry, folder, false, install_stop_handler());
  if (o.out.empty()) fs::remove_all(folder);
  fmt::print("{}", support_table(answers));
  // Exit 1 when some model runs on no framework here.
  for (const auto& model : o.models) {
    bool runs = false;
    for (const auto& a : answers) runs = runs || (a.model == model && a.runs());
    if (!runs) return 1;
  }
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Which frameworks can load, compile and run a model, and why the others cannot");
  static CheckOptions o;
  cmd->add_option("models", o.models, "Model files")->required();
  cmd->add_option("-b,--backends", o.backends, "Frameworks to ask (default: every built one that reads the model)")
      ->delimiter(',');
  cmd->add_option("--shape", o.shapes, "Concrete input shape for dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--shape-range", o.shape_ranges,
                  "Input shape drawn per query, as `run` takes it (repeatable, or comma-separated)")
      ->delimiter(',');
  cmd->add_option("--input", o.inputs, "User data for an input, NAME=FILE.npy (repeatable)");
  cmd->add_option("--out", o.out, "Keep each framework's result file in this folder (default: none kept)");
  cmd->callback([&exit_code] { exit_code = check(o); });
}

}  // namespace infermark::cli

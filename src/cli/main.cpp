// infermark: benchmark AI inference frameworks side by side on the same model and inputs.
#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include <csignal>

#include "cli/commands.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  // A file size limit (RLIMIT_FSIZE) then fails the write with EFBIG, reported like a full disk,
  // instead of killing the process and what it measured; workers inherit the disposition.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"infermark: benchmark AI inference frameworks side by side"};
  app.require_subcommand(1);
  // One line naming the flag and the cause, as every other infermark error.
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string("infermark: ") + e.what() + "\n"; });
  int exit_code = 0;
  infermark::cli::add_backends_command(app, exit_code);
  infermark::cli::add_check_command(app, exit_code);
  infermark::cli::add_compare_command(app, exit_code);
  infermark::cli::add_env_command(app, exit_code);
  infermark::cli::add_evaluate_command(app, exit_code);
  infermark::cli::add_recommend_command(app, exit_code);
  infermark::cli::add_run_command(app, exit_code);
  infermark::cli::add_pipeline_command(app, exit_code);
  infermark::cli::add_pipeline_stage_command(app, exit_code);
  infermark::cli::add_worker_command(app, exit_code);
  infermark::cli::add_report_command(app, exit_code);
  infermark::cli::add_serve_command(app, exit_code);
  infermark::cli::add_load_command(app, exit_code);
  infermark::cli::add_sweep_command(app, exit_code);
  infermark::cli::add_zoo_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too (exit 0); every bad flag is bad input, exit 2 like the rest.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const infermark::Error& e) {
    fmt::print(stderr, "infermark: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    // A bug, not bad input: say so rather than abort; result files already written are kept.
    fmt::print(stderr, "infermark: internal error: {}\n", e.what());
    return 70;
  }
  return exit_code;
}

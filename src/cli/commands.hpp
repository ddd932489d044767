// One registration function per subcommand; each lives in its own cmd_*.cpp file. A subcommand's
// callback stores its exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace infermark::cli {

void add_backends_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_recommend_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_pipeline_command(CLI::App& app, int& exit_code);
void add_pipeline_stage_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_sweep_command(CLI::App& app, int& exit_code);
void add_zoo_command(CLI::App& app, int& exit_code);

}  // namespace infermark::cli

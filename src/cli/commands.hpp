// One registration function per subcommand; each lives in its own cmd_*.cpp file. A subcommand's
// callback stores its exit code in `exit_code`.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace infermark::cli {

void add_backends_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_evaluate_command(CLI::App& app, int& exit_code);
void add_recommend_command(CLI::App& app, int& exit_code);
void add_load_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_serve_command(CLI::App& app, int& exit_code);
void add_pipeline_command(CLI::App& app, int& exit_code);
void add_pipeline_stage_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_sweep_command(CLI::App& app, int& exit_code);
void add_zoo_command(CLI::App& app, int& exit_code);

// `infermark pipeline FILE --out OUT` with the file's own settings (how `sweep` runs a pipeline
// study; see cmd_pipeline.cpp). Returns the exit code.
int run_pipeline_study(const std::string& file, const std::string& out);

}  // namespace infermark::cli

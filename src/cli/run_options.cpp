#include "cli/run_options.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "probes/environment.hpp"

namespace infermark::cli {
namespace {

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(flag + " " + text + ": expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::filesystem::path self_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

}  // namespace

int default_thread_count() {
  const auto env = probes::capture_environment();
  return env.physical_cores > 0 ? env.physical_cores : 1;
}

void add_measurement_flags(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--batch", o.batch, "Batch size fed to dynamic batch dimensions")->check(CLI::PositiveNumber)->capture_default_str();
  cmd.add_option("--warmup", o.warmup, "Untimed warm-up runs before measuring")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd.add_option("--runs", o.runs, "Timed runs")->check(CLI::PositiveNumber)->capture_default_str();
  cmd.add_option("--threads", o.threads,
                 "Intra-op threads for every backend, a list such as 1,2,4 gives one cell each "
                 "(0: each framework's own default; default: physical cores)")
      ->delimiter(',')->check(CLI::NonNegativeNumber);
  cmd.add_option("--inter-op-threads", o.inter_op_threads, "Inter-op threads (0: framework default)")->check(CLI::NonNegativeNumber);
  cmd.add_option("--precision", o.precision, "Inference precision requested: fp32, bf16, fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))->capture_default_str();
  cmd.add_option("--device", o.device, "Device")->check(CLI::IsMember({"cpu"}))->capture_default_str();
  cmd.add_option("--shape", o.shapes, "Concrete input shape for dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  cmd.add_option("--input", o.input_files, "User data for an input, NAME=FILE.npy (repeatable; others stay random)");
  cmd.add_option("--opt", o.backend_opts, "Framework-specific option KEY=VALUE (see docs/backends.md; repeatable)");
  cmd.add_option("--seed", o.seed, "Seed of the random input data")->capture_default_str();
}

std::vector<int> thread_counts(const RunOptions& o) {
  if (o.threads.empty()) return {default_thread_count()};
  std::vector<int> counts;
  for (int t : o.threads)
    if (std::find(counts.begin(), counts.end(), t) == counts.end()) counts.push_back(t);
  return counts;
}

harness::CellRequest to_cell(const RunOptions& o, const std::string& backend, int threads) {
  harness::CellRequest cell;
  cell.backend = backend;
  cell.model = o.model;
  cell.options.intra_op_threads = threads;
  cell.options.inter_op_threads = o.inter_op_threads;
  cell.options.precision = o.precision;
  cell.options.device = o.device;
  for (const auto& opt : o.backend_opts) {
    auto [key, value] = split_assignment(opt, "--opt");
    cell.options.extras[key] = value;
  }
  cell.inputs.batch = o.batch;
  cell.inputs.seed = o.seed;
  for (const auto& shape : o.shapes) {
    auto [name, dims] = split_assignment(shape, "--shape");
    cell.inputs.shape_overrides[name] = parse_shape(dims, "--shape " + shape);
  }
  for (const auto& input : o.input_files) {
    auto [name, file] = split_assignment(input, "--input");
    if (!std::filesystem::is_regular_file(file)) throw Error("--input " + input + ": no such file");
    cell.inputs.files[name] = file;
  }
  cell.scenario.warmup_runs = o.warmup;
  cell.scenario.timed_runs = o.runs;
  return cell;
}

std::vector<std::string> worker_command(const RunOptions& o, const harness::CellRequest& cell,
                                        const std::filesystem::path& result_path) {
  std::vector<std::string> argv{self_executable().string(), "worker", o.model,
                                "--backend", cell.backend,
                                "--result", result_path.string(),
                                "--batch", std::to_string(o.batch),
                                "--warmup", std::to_string(o.warmup),
                                "--runs", std::to_string(o.runs),
                                "--threads", std::to_string(cell.options.intra_op_threads),
                                "--inter-op-threads", std::to_string(o.inter_op_threads),
                                "--precision", o.precision,
                                "--device", o.device,
                                "--seed", std::to_string(o.seed)};
  for (const auto& s : o.shapes) argv.insert(argv.end(), {"--shape", s});
  for (const auto& i : o.input_files) argv.insert(argv.end(), {"--input", i});
  if (!cell.outputs_dir.empty()) argv.insert(argv.end(), {"--save-outputs", cell.outputs_dir.string()});
  for (const auto& opt : o.backend_opts) argv.insert(argv.end(), {"--opt", opt});
  return argv;
}

}  // namespace infermark::cli

// `infermark recommend RESULTS...`: the cell to deploy under the given constraints, ranked and
// explained; exit 3 when some model has no cell that meets every constraint.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/recommend.hpp"

namespace infermark::cli {
namespace {

struct RecommendCommandOptions {
  std::vector<std::string> results;
  double p99_ms = 0, min_qps = 0, mem_mb = 0, max_accuracy_loss = 0;
  double price_per_hour = 0, target_qps = 0, model_gflops = 0, peak_gflops = 0;
  double ttft_ms = 0, tpot_ms = 0, watts = 0;
  bool dynamic_shapes = false, energy = false, as_json = false;
  bool domestic_hardware = false, fast_iteration = false, dynamic_control_flow = false, multi_backend = false;
};

// A limit or figure that must be a positive number.
CLI::Option* positive_option(CLI::App* cmd, const std::string& name, double& value, const std::string& help) {
  return cmd->add_option(name, value, help)->check(above_zero());
}

// A flag's value only when the user gave it: 0 can be a real limit (accuracy loss 0%).
std::optional<double> given(const CLI::Option* option, double value) {
  return option->count() > 0 ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

void add_recommend_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("recommend", "Pick the backend and configuration that meets your constraints, and explain why");
  static RecommendCommandOptions o;
  cmd->add_option("results", o.results, "Result files or folders")->required();
  auto* p99 = positive_option(cmd, "--p99-ms", o.p99_ms, "Highest acceptable P99 latency (ms)");
  auto* qps = positive_option(cmd, "--min-qps", o.min_qps, "Lowest acceptable throughput (inferences/s)");
  auto* mem = positive_option(cmd, "--mem-mb", o.mem_mb, "Highest acceptable peak RSS (MB)");
  auto* accuracy = cmd->add_option("--max-accuracy-loss", o.max_accuracy_loss,
                                   "Highest acceptable accuracy loss: where the inputs had labels, points of top-1 vs "
                                   "labels below the model family's FP32 reference cell; else percent against the "
                                   "cross-check reference (1 - top-1 agreement, else 1 - cosine similarity)")
                       ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--dynamic-shapes", o.dynamic_shapes, "The deployment feeds varying input shapes");
  cmd->add_flag("--energy", o.energy, "Prefer the most inferences per joule (where energy was measured)");
  auto* ttft = positive_option(cmd, "--ttft-ms", o.ttft_ms, "LLM cells: highest acceptable P99 time to first token (ms)");
  auto* tpot = positive_option(cmd, "--tpot-ms", o.tpot_ms, "LLM cells: highest acceptable P99 time per output token (ms)");
  auto* watts = positive_option(cmd, "--watts", o.watts,
                                "Power budget: highest acceptable average power (measured energy / duration, W); cells "
                                "without an energy measurement cannot be judged");
  // Situations of the field guides' decision trees that neither the results nor another flag reveal.
  cmd->add_flag("--domestic-hardware", o.domestic_hardware, "The deployment targets domestic (e.g. Ascend) hardware");
  cmd->add_flag("--fast-iteration", o.fast_iteration, "The team values fast iteration over peak speed");
  cmd->add_flag("--dynamic-control-flow", o.dynamic_control_flow, "The model has data-dependent control flow");
  cmd->add_flag("--multi-backend", o.multi_backend, "The model must run on several backends or kinds of hardware");
  auto* price =
      positive_option(cmd, "--price-per-hour", o.price_per_hour, "Machine price per hour, for cost per million inferences");
  auto* target =
      positive_option(cmd, "--target-qps", o.target_qps, "Load to serve (inferences/s), for the number of machines");
  auto* gflops = positive_option(cmd, "--model-gflops", o.model_gflops,
                                 "GFLOP per inference of the model, for GFLOP/s and % of peak (default: the zoo manifest "
                                 "beside the model, when found)");
  auto* peak = positive_option(
      cmd, "--peak-gflops", o.peak_gflops,
      "Peak GFLOP/s of the measured machine (default: derived from this machine's cores, clock and SIMD flags)");
  cmd->add_flag("--json", o.as_json, "Print JSON instead of Markdown");
  cmd->callback([&exit_code, p99, qps, mem, accuracy, price, target, gflops, peak, ttft, tpot, watts] {
    report::Constraints c;
    c.p99_ms = given(p99, o.p99_ms);
    c.min_qps = given(qps, o.min_qps);
    c.mem_mb = given(mem, o.mem_mb);
    c.max_accuracy_loss_pct = given(accuracy, o.max_accuracy_loss);
    c.dynamic_shapes = o.dynamic_shapes;
    c.energy = o.energy;
    c.price_per_hour = given(price, o.price_per_hour);
    c.target_qps = given(target, o.target_qps);
    c.model_gflops = given(gflops, o.model_gflops);
    c.ttft_ms = given(ttft, o.ttft_ms);
    c.tpot_ms = given(tpot, o.tpot_ms);
    c.watts = given(watts, o.watts);
    c.domestic_hardware = o.domestic_hardware;
    c.fast_iteration = o.fast_iteration;
    c.dynamic_control_flow = o.dynamic_control_flow;
    c.multi_backend = o.multi_backend;
    std::optional<probes::PeakFlops> peak_flops;
    if (peak->count() > 0) {
      peak_flops = probes::PeakFlops{o.peak_gflops, fmt::format("{:g} GFLOP/s, given with --peak-gflops", o.peak_gflops), ""};
    } else {
      // Result files do not record the clock, so the current machine stands in for the measured one.
      try {
        peak_flops = probes::this_machine_peak_gflops();
        peak_flops->derivation += " (this machine, standing in for the measured one)";
      } catch (const Error&) {
        // No clock readable: % of peak is left out and the output says the peak is unknown.
      }
    }
    const auto recommendation = report::recommend(report::load_results(o.results), c, peak_flops);
    fmt::print("{}", o.as_json ? json_text(report::to_json(recommendation), 2) + "\n" : report::to_markdown(recommendation));
    exit_code = recommendation.every_model_has_a_pick() ? 0 : 3;
  });
}

}  // namespace infermark::cli

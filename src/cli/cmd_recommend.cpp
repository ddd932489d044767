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
  bool dynamic_shapes = false, energy = false, as_json = false;
};

// A flag's value only when the user gave it: 0 can be a real limit (accuracy loss 0%).
std::optional<double> given(const CLI::Option* option, double value) {
  return option->count() > 0 ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

void add_recommend_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("recommend", "Pick the backend and configuration that meets your constraints, and explain why");
  static RecommendCommandOptions o;
  cmd->add_option("results", o.results, "Result files or folders")->required();
  auto* p99 = cmd->add_option("--p99-ms", o.p99_ms, "Highest acceptable P99 latency (ms)")->check(above_zero());
  auto* qps = cmd->add_option("--min-qps", o.min_qps, "Lowest acceptable throughput (inferences/s)")->check(above_zero());
  auto* mem = cmd->add_option("--mem-mb", o.mem_mb, "Highest acceptable peak RSS (MB)")->check(above_zero());
  auto* accuracy = cmd->add_option("--max-accuracy-loss", o.max_accuracy_loss,
                                   "Highest acceptable accuracy loss against the cross-check reference, in percent "
                                   "(1 - top-1 agreement, else 1 - cosine similarity)")
                       ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--dynamic-shapes", o.dynamic_shapes, "The deployment feeds varying input shapes");
  cmd->add_flag("--energy", o.energy, "Prefer the most inferences per joule (where energy was measured)");
  auto* price = cmd->add_option("--price-per-hour", o.price_per_hour, "Machine price per hour, for cost per million inferences")
                    ->check(above_zero());
  auto* target = cmd->add_option("--target-qps", o.target_qps, "Load to serve (inferences/s), for the number of machines")
                     ->check(above_zero());
  auto* gflops = cmd->add_option("--model-gflops", o.model_gflops,
                                 "GFLOP per inference of the model, for GFLOP/s and % of peak (default: the zoo manifest beside "
                                 "the model, when found)")
                     ->check(above_zero());
  auto* peak =
      cmd->add_option("--peak-gflops", o.peak_gflops,
                      "Peak GFLOP/s of the measured machine (default: derived from this machine's cores, clock and SIMD flags)")
          ->check(above_zero());
  cmd->add_flag("--json", o.as_json, "Print JSON instead of Markdown");
  cmd->callback([&exit_code, p99, qps, mem, accuracy, price, target, gflops, peak] {
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

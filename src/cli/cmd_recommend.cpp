// `infermark recommend RESULTS...`: the cell to deploy under the given constraints, ranked and
// explained; exit 3 when some model has no cell that meets every constraint.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/recommend_command.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/recommend.hpp"

namespace infermark::cli {
namespace {

// A limit or figure that must be a positive number, stored only when given: 0 can be a real
// limit elsewhere (accuracy loss 0%), so "not given" is an empty optional, not a zero.
CLI::Option* optional_number(CLI::App& cmd, const std::string& name, std::optional<double>& value, const std::string& help) {
  return cmd.add_option_function<double>(
      name, [&value](double given) { value = given; }, help);
}

// The machine's peak as given, else this machine's standing in for the measured one (result files
// do not record the clock); none when no clock is readable (% of peak is then left out).
std::optional<probes::PeakFlops> peak_flops(const std::optional<double>& given) {
  if (given) return probes::PeakFlops{*given, fmt::format("{:g} GFLOP/s, given with --peak-gflops", *given), ""};
  try {
    auto peak = probes::this_machine_peak_gflops();
    peak.derivation += " (this machine, standing in for the measured one)";
    return peak;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

void define_recommend_flags(CLI::App& cmd, RecommendOptions& o) {
  auto& c = o.constraints;
  cmd.add_option("results", o.results, "Result files or folders")->required();
  optional_number(cmd, "--p99-ms", c.p99_ms, "Highest acceptable P99 latency (ms)")->check(above_zero());
  optional_number(cmd, "--min-qps", c.min_qps, "Lowest acceptable throughput (inferences/s)")->check(above_zero());
  optional_number(cmd, "--mem-mb", c.mem_mb, "Highest acceptable peak RSS (MB)")->check(above_zero());
  optional_number(cmd, "--max-accuracy-loss", c.max_accuracy_loss_pct,
                  "Highest acceptable accuracy loss: where the inputs had labels, points of top-1 vs "
                  "labels below the model family's FP32 reference cell; LLM cells: percent of perplexity above "
                  "the family's higher-precision cell on the same text; else percent against the "
                  "cross-check reference (1 - top-1 agreement, else 1 - cosine similarity)")
      ->check(CLI::Range(0.0, 100.0));
  cmd.add_flag("--dynamic-shapes", c.dynamic_shapes, "The deployment feeds varying input shapes");
  cmd.add_flag("--energy", c.energy, "Prefer the most inferences per joule (where energy was measured)");
  optional_number(cmd, "--ttft-ms", c.ttft_ms, "LLM cells: highest acceptable P99 time to first token (ms)")->check(above_zero());
  optional_number(cmd, "--tpot-ms", c.tpot_ms, "LLM cells: highest acceptable P99 time per output token (ms)")
      ->check(above_zero());
  optional_number(cmd, "--watts", c.watts,
                  "Power budget: highest acceptable average power (measured energy / duration, W); cells "
                  "without an energy measurement cannot be judged")
      ->check(above_zero());
  // Situations of the field guides' decision trees that neither the results nor another flag reveal.
  cmd.add_flag("--domestic-hardware", c.domestic_hardware, "The deployment targets domestic (e.g. Ascend) hardware");
  cmd.add_flag("--fast-iteration", c.fast_iteration, "The team values fast iteration over peak speed");
  cmd.add_flag("--dynamic-control-flow", c.dynamic_control_flow, "The model has data-dependent control flow");
  cmd.add_flag("--multi-backend", c.multi_backend, "The model must run on several backends or kinds of hardware");
  optional_number(cmd, "--price-per-hour", c.price_per_hour, "Machine price per hour, for cost per million inferences")
      ->check(above_zero());
  optional_number(cmd, "--target-qps", c.target_qps, "Load to serve (inferences/s), for the number of machines")
      ->check(above_zero());
  optional_number(cmd, "--model-gflops", c.model_gflops,
                  "GFLOP per inference of the model, for GFLOP/s and % of peak (default: the zoo manifest "
                  "beside the model, when found)")
      ->check(above_zero());
  optional_number(cmd, "--peak-gflops", o.peak_gflops,
                  "Peak GFLOP/s of the measured machine (default: derived from this machine's cores, clock and SIMD flags)")
      ->check(above_zero());
  cmd.add_flag("--json", o.as_json, "Print JSON instead of Markdown");
}

void add_recommend_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("recommend", "Pick the backend and configuration that meets your constraints, and explain why");
  static RecommendOptions o;
  define_recommend_flags(*cmd, o);
  cmd->callback([&exit_code] {
    const auto recommendation = report::recommend(report::load_results(o.results), o.constraints, peak_flops(o.peak_gflops));
    fmt::print("{}", o.as_json ? json_text(report::to_json(recommendation), 2) + "\n" : report::to_markdown(recommendation));
    exit_code = recommendation.every_model_has_a_pick() ? 0 : 3;
  });
}

}  // namespace infermark::cli

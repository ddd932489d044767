#include "cli/run_options.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "core/model_manifest.hpp"
#include "probes/environment.hpp"

namespace infermark::cli {
namespace {

// CLI11's own range validators print the whole double range; these say what is wrong.
CLI::Validator number_check(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double value = 0;
        std::size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (allow_zero ? value < 0 : value <= 0) return text + (allow_zero ? " is negative" : " must be above 0");
        return "";
      },
      allow_zero ? "NUMBER>=0" : "NUMBER>0");
}
const CLI::Validator kAboveZero = number_check(false);
const CLI::Validator kNotNegative = number_check(true);

}  // namespace

const CLI::Validator& above_zero() { return kAboveZero; }
const CLI::Validator& not_negative() { return kNotNegative; }

namespace {

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(flag + " " + text + ": expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

void add_scenario_flags(CLI::App& cmd, RunOptions& o) {
  auto& s = o.scenario;
  cmd.add_option("--scenario", s.name, loadgen::scenario_choices() + " (default single-stream; LLMs too)")
      ->transform(CLI::CheckedTransformer(loadgen::scenario_names()));
  cmd.add_option("--concurrency", o.concurrency,
                 "Clients (concurrency, offline), serving lanes (server, soak, pulse) or sequences batched together "
                 "(LLMs); a list gives one cell per level, e.g. 1,4,16")
      ->delimiter(',')->check(kAboveZero);
  cmd.add_option("--prompt-tokens", o.prompt_tokens, "LLMs: prompt length in tokens, MEAN or MEAN:STDDEV (seeded draws)")
      ->capture_default_str();
  cmd.add_option("--output-tokens", o.output_tokens,
                 "LLMs: tokens generated per request, MEAN or MEAN:STDDEV (greedy, end-of-sequence ignored)")
      ->capture_default_str();
  cmd.add_option("--warmup", s.warmup_queries, "Untimed warm-up queries before measuring")->capture_default_str();
  cmd.add_option("--warmup-s", s.warmup_s, "Warm-up for at least this many seconds")->check(kNotNegative);
  cmd.add_option("--runs", s.max_queries, "Timed queries (closed-loop scenarios); 0 = run for --max-duration")
      ->capture_default_str();
  cmd.add_option("--min-queries", s.min_queries, "Fewest timed queries for a valid run")->capture_default_str();
  cmd.add_option("--min-duration", s.min_duration_s, "Shortest timed run in seconds")->check(kNotNegative);
  cmd.add_option("--max-duration", s.max_duration_s, "Hard cap on a closed-loop run in seconds")->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--qps", s.qps, "Arrival rate for --scenario server (queries/s)")->check(kAboveZero);
  cmd.add_option("--arrivals", s.arrivals, "poisson or constant (default poisson)")->transform(CLI::CheckedTransformer(loadgen::arrivals_names()));
  cmd.add_option("--duration", s.duration_s, "Seconds of open-loop load (server, each --find-max-qps trial)")
      ->check(kAboveZero)->capture_default_str();
  cmd.add_option("--p99-ms", s.sla_p99_ms, "SLA on P99 latency in ms (server pass/fail, ramp knee; LLMs: end-to-end)")->check(kNotNegative);
  cmd.add_option("--ttft-ms", s.ttft_ms, "LLMs: SLO on time to first token in ms (P99 for verdicts; per request for goodput)")
      ->check(kNotNegative);
  cmd.add_option("--tpot-ms", s.tpot_ms, "LLMs: SLO on time per output token in ms (P99 for verdicts; per request for goodput)")
      ->check(kNotNegative);
  cmd.add_flag("--find-max-qps", s.find_max_qps, "Search the highest arrival rate that meets the SLOs (--p99-ms, --ttft-ms, --tpot-ms)");
  cmd.add_option("--max-queue", s.max_queue, "Queued arrivals beyond this are rejected (open loop)")->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--ramp-by", s.ramp_by, "concurrency or rate (default concurrency)")->transform(CLI::CheckedTransformer(loadgen::ramp_by_names()));
  cmd.add_option("--ramp-step", s.ramp_step, "Clients or queries/s added per step")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--ramp-start", s.ramp_start, "First step's level (default 1 client, or one step of rate)")->check(kNotNegative);
  cmd.add_option("--ramp-steps", s.ramp_steps, "Number of steps")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--step-duration", s.step_duration_s, "Seconds per ramp step")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--capacity-probe", s.capacity_probe_s, "Seconds of the closed-loop probe sizing soak/pulse/find-max-qps")
      ->check(kAboveZero)->capture_default_str();
  cmd.add_option("--soak-share", s.soak_share, "Soak load as a share of measured capacity")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--soak-duration", s.soak_duration_s, "Soak length in seconds")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--soak-interval", s.soak_interval_s, "Seconds per soak reporting interval")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--pulse-baseline", s.pulse_baseline_share, "Pulse baseline as a share of capacity")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--pulse-burst", s.pulse_burst_share, "Pulse burst as a share of capacity")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--pulse-times", o.pulse_times_text, "Pulse phase seconds BASELINE,BURST,RECOVERY")->capture_default_str();
}

int default_thread_count() {
  const auto env = probes::capture_environment();
  return env.physical_cores > 0 ? env.physical_cores : 1;
}

void add_measurement_flags(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--batch", o.batch, "Batch size fed to dynamic batch dimensions")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--threads", o.threads,
                 "Intra-op threads for every backend, a list such as 1,2,4 gives one cell each "
                 "(0: each framework's own default; default: physical cores)")
      ->delimiter(',')->check(kNotNegative);
  cmd.add_option("--inter-op-threads", o.inter_op_threads, "Inter-op threads (0: framework default)")->check(kNotNegative);
  cmd.add_option("--precision", o.precision, "Inference precision requested: fp32, bf16, fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))->capture_default_str();
  cmd.add_option("--device", o.device, "Device")->check(CLI::IsMember({"cpu"}))->capture_default_str();
  cmd.add_option("--shape", o.shapes, "Concrete input shape for dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  cmd.add_option("--shape-range", o.shape_ranges,
                 "Input shape drawn per query, NAME=1x3x160-288x160-288; LOW-HIGH/N rounds draws up to multiples of N "
                 "(buckets); a range with no varying dimension is a fixed --shape (repeatable, or comma-separated)")
      ->delimiter(',');
  cmd.add_option("--shape-sets", o.shape_sets, "Input sets drawn ahead for --shape-range; queries cycle through them")
      ->check(CLI::Range(2, 4096))->capture_default_str();
  cmd.add_option("--input", o.input_files, "User data for an input, NAME=FILE.npy (repeatable; others stay random)");
  cmd.add_option("--opt", o.backend_opts, "Framework-specific option KEY=VALUE (see docs/backends.md; repeatable)");
  cmd.add_option("--int-high", o.int_high, "Integer inputs (token ids) are drawn from [0, N); e.g. the vocabulary size")
      ->check(kAboveZero)->capture_default_str();
  cmd.add_option("--sessions", o.sessions,
                 "Lanes share one session where the framework can (shared) or each opens its own copy (separate)")
      ->check(CLI::IsMember({"shared", "separate"}))->capture_default_str();
  cmd.add_option("--seed", o.seed, "Seed of the random input data and arrival times")->capture_default_str();
  add_scenario_flags(cmd, o);
}

std::vector<int> concurrency_levels(const RunOptions& o) {
  if (o.concurrency.empty()) return {0};
  std::vector<int> levels;
  for (int c : o.concurrency)
    if (std::find(levels.begin(), levels.end(), c) == levels.end()) levels.push_back(c);
  return levels;
}

namespace {

// "512" or "512:64" (mean:stddev) tokens.
std::pair<double, double> parse_token_length(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  auto number = [&](const std::string& part) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || value < 0) throw Error(flag + " " + text + ": expected MEAN or MEAN:STDDEV tokens");
    return value;
  };
  const double mean = number(text.substr(0, colon));
  if (mean < 1) throw Error(flag + " " + text + ": must be at least 1 token");
  return {mean, colon == std::string::npos ? 0.0 : number(text.substr(colon + 1))};
}

}  // namespace

std::vector<int> thread_counts(const RunOptions& o) {
  if (o.threads.empty()) return {default_thread_count()};
  std::vector<int> counts;
  for (int t : o.threads)
    if (std::find(counts.begin(), counts.end(), t) == counts.end()) counts.push_back(t);
  return counts;
}

harness::CellRequest to_cell(const RunOptions& o, const std::string& backend, int threads, int concurrency) {
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
  cell.inputs.int_high = o.int_high;
  cell.separate_sessions = o.sessions == "separate";
  cell.inputs.int_ranges = read_value_ranges(o.model);
  for (const auto& shape : o.shapes) {
    auto [name, dims] = split_assignment(shape, "--shape");
    cell.inputs.shape_overrides[name] = parse_shape(dims, "--shape " + shape);
  }
  for (const auto& text : o.shape_ranges) {
    auto [name, dims] = split_assignment(text, "--shape-range");
    const auto range = parse_shape_range(dims, "--shape-range " + text);
    if (cell.inputs.shape_overrides.count(name) || cell.inputs.varying.ranges.count(name))
      throw Error("--shape-range " + text + ": input '" + name + "' already has a shape; give one --shape or --shape-range per input");
    if (varies(range)) {
      cell.inputs.varying.ranges[name] = range;
      continue;
    }
    for (const auto& dim : range) cell.inputs.shape_overrides[name].push_back(dim.low);
  }
  cell.inputs.varying.sets = o.shape_sets;
  for (const auto& input : o.input_files) {
    auto [name, file] = split_assignment(input, "--input");
    if (!std::filesystem::is_regular_file(file)) throw Error("--input " + input + ": no such file");
    cell.inputs.files[name] = file;
  }
  cell.scenario = scenario_of(o, concurrency);
  loadgen::validate(cell.scenario);
  return cell;
}

loadgen::ScenarioSpec scenario_of(const RunOptions& o, int concurrency) {
  auto scenario = o.scenario;
  scenario.seed = o.seed;
  scenario.concurrency = concurrency > 0 ? concurrency : concurrency_levels(o).front();
  std::tie(scenario.prompt_tokens, scenario.prompt_tokens_stddev) = parse_token_length(o.prompt_tokens, "--prompt-tokens");
  std::tie(scenario.output_tokens, scenario.output_tokens_stddev) = parse_token_length(o.output_tokens, "--output-tokens");
  const auto pulse = parse_shape(o.pulse_times_text, "--pulse-times");  // three positive integers, "10,10,20"
  if (pulse.size() != 3) throw Error("--pulse-times " + o.pulse_times_text + ": expected BASELINE,BURST,RECOVERY seconds");
  scenario.pulse_baseline_s = static_cast<double>(pulse[0]);
  scenario.pulse_burst_s = static_cast<double>(pulse[1]);
  scenario.pulse_recovery_s = static_cast<double>(pulse[2]);
  return scenario;
}

}  // namespace infermark::cli

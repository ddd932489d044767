#include "cli/run_flags.hpp"

#include <algorithm>

#include "core/error.hpp"

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

std::vector<std::string> trace_format_choices() {
  std::vector<std::string> choices{"auto"};
  for (const auto& [name, format] : loadgen::trace_format_names()) choices.push_back(name);
  return choices;
}

}  // namespace

const CLI::Validator& above_zero() { return kAboveZero; }
const CLI::Validator& not_negative() { return kNotNegative; }

CLI::Option* add_memory_limit_flag(CLI::App& cmd, double& limit_mb) {
  constexpr double kBytesPerMib = 1024.0 * 1024.0;
  return cmd
      .add_option_function<std::uint64_t>(
          "--memory-limit", [&limit_mb](std::uint64_t bytes) { limit_mb = static_cast<double>(bytes) / kBytesPerMib; },
          "Resident memory each cell's worker may use, e.g. 512M or 2G; a worker over it is stopped and its cell "
          "reported as memory_limit (default: none)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber);
}

void add_scenario_flags(CLI::App& cmd, harness::RunOptions& o) {
  auto& s = o.scenario;
  cmd.add_option("--scenario", s.name, loadgen::scenario_choices() + " (default single-stream; LLMs too)")
      ->transform(CLI::CheckedTransformer(loadgen::scenario_names()));
  cmd.add_option("--concurrency", o.concurrency,
                 "Clients (concurrency, offline), serving lanes (server, soak, pulse) or sequences batched together "
                 "(LLMs); a list gives one cell per level, e.g. 1,4,16")
      ->delimiter(',')
      ->check(kAboveZero);
  cmd.add_option("--prompt-tokens", o.prompt_tokens, "LLMs: prompt length in tokens, MEAN or MEAN:STDDEV (seeded draws)")
      ->capture_default_str();
  cmd.add_option("--output-tokens", o.output_tokens,
                 "LLMs: tokens generated per request, MEAN or MEAN:STDDEV (greedy, end-of-sequence ignored)")
      ->capture_default_str();
  cmd.add_option("--shared-prefix", o.shared_prefix,
                 "LLMs: GROUPS:TOKENS, each prompt starts with one of GROUPS shared prefixes of TOKENS tokens (words "
                 "for `load`'s synthetic prompts) before its own --prompt-tokens; TTFT is reported warm and cold");
  cmd.add_option("--dataset", s.dataset,
                 "LLMs: cut prompts from this text (run: tokenized by the model's own tokenizer, exact lengths; load: "
                 "words) instead of synthetic ones");
  cmd.add_option("--turns", s.conversation.turns,
                 "LLMs: multi-turn conversations of N turns, each client a user; a turn's prompt is the history so far "
                 "(earlier prompts and answers) plus a new --prompt-tokens message; latency per turn")
      ->check(kNotNegative);
  cmd.add_option("--think-time", o.think_time, "Conversations: seconds a user thinks between turns, MEAN or MEAN:STDDEV")
      ->capture_default_str();
  cmd.add_option("--trace", s.trace.file,
                 "Replay a recorded trace's arrivals and request lengths (--scenario replay): Mooncake JSONL, Azure LLM "
                 "inference CSV or BurstGPT CSV (docs/methodology.md)");
  cmd.add_option("--trace-format", o.trace_format, "auto (from the file), mooncake, azure or burstgpt")
      ->check(CLI::IsMember(trace_format_choices()))
      ->capture_default_str();
  cmd.add_option("--trace-speed", s.trace.speed, "Replay this many times faster than recorded (0.5: half as fast)")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--trace-requests", s.trace.max_requests, "Replay the trace's first N requests (0: all)")->capture_default_str();
  cmd.add_option("--warmup", s.warmup_queries, "Untimed warm-up queries before measuring")->capture_default_str();
  cmd.add_option("--warmup-s", s.warmup_s, "Warm-up for at least this many seconds")->check(kNotNegative);
  cmd.add_option("--runs", s.max_queries, "Timed queries (closed-loop scenarios); 0 = run for --max-duration")
      ->capture_default_str();
  cmd.add_option("--min-queries", s.min_queries, "Fewest timed queries for a valid run")->capture_default_str();
  cmd.add_option("--min-duration", s.min_duration_s, "Shortest timed run in seconds")->check(kNotNegative);
  cmd.add_option("--max-duration", s.max_duration_s, "Hard cap on a closed-loop run in seconds")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--qps", s.qps, "Arrival rate for --scenario server (queries/s)")->check(kAboveZero);
  cmd.add_option("--arrivals", s.arrivals, "poisson or constant (default poisson)")
      ->transform(CLI::CheckedTransformer(loadgen::arrivals_names()));
  cmd.add_option("--pacing", s.pacing,
                 "Open loop: spin (arrivals on time to a few µs; busy CPU at high rates) or sleep (far less client CPU; "
                 "arrivals tens of µs late, shown as issue lateness)")
      ->transform(CLI::CheckedTransformer(loadgen::pacing_names()))
      ->default_str("spin");
  cmd.add_option("--duration", s.duration_s, "Seconds of open-loop load (server, each --find-max-qps trial)")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--p99-ms", s.sla_p99_ms, "SLA on P99 latency in ms (server pass/fail, ramp knee; LLMs: end-to-end)")
      ->check(kNotNegative);
  cmd.add_option("--ttft-ms", s.ttft_ms, "LLMs: SLO on time to first token in ms (P99 for verdicts; per request for goodput)")
      ->check(kNotNegative);
  cmd.add_option("--tpot-ms", s.tpot_ms, "LLMs: SLO on time per output token in ms (P99 for verdicts; per request for goodput)")
      ->check(kNotNegative);
  cmd.add_flag("--find-max-qps", s.find_max_qps,
               "Search the highest arrival rate that meets the SLOs (--p99-ms, --ttft-ms, --tpot-ms)");
  cmd.add_option("--max-queue", s.max_queue, "Queued arrivals beyond this are rejected (open loop)")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--ramp-by", s.ramp_by, "concurrency or rate (default concurrency)")
      ->transform(CLI::CheckedTransformer(loadgen::ramp_by_names()));
  cmd.add_option("--ramp-step", s.ramp_step, "Clients or queries/s added per step")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--ramp-start", s.ramp_start, "First step's level (default 1 client, or one step of rate)")->check(kNotNegative);
  cmd.add_option("--ramp-steps", s.ramp_steps, "Number of steps (with --until-saturation: the most)")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_flag("--until-saturation", s.until_saturation,
               "Rate ramps: stop after the first step that saturated (errors, rejections, or under 95% of the asked "
               "rate completed), a request-rate sweep; goodput is reported per step");
  cmd.add_option("--step-duration", s.step_duration_s, "Seconds per ramp step")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--capacity-probe", s.capacity_probe_s, "Seconds of the closed-loop probe sizing soak/pulse/find-max-qps")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--soak-share", s.soak_share, "Soak load as a share of measured capacity")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--soak-duration", s.soak_duration_s, "Soak length in seconds")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--soak-interval", s.soak_interval_s, "Seconds per soak reporting interval")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--pulse-baseline", s.pulse_baseline_share, "Pulse baseline as a share of capacity")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--pulse-burst", s.pulse_burst_share, "Pulse burst as a share of capacity")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--pulse-times", o.pulse_times_text, "Pulse phase seconds BASELINE,BURST,RECOVERY")->capture_default_str();
}

void add_input_flags(CLI::App& cmd, harness::RunOptions& o) {
  cmd.add_option("--batch", o.batch, "Batch size fed to dynamic batch dimensions")->check(kAboveZero)->capture_default_str();
  cmd.add_option("--shape", o.shapes, "Concrete input shape for dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  cmd.add_option("--shape-range", o.shape_ranges,
                 "Input shape drawn per query, NAME=1x3x160-288x160-288; LOW-HIGH/N rounds draws up to multiples of N "
                 "(buckets); a range with no varying dimension is a fixed --shape (repeatable, or comma-separated)")
      ->delimiter(',');
  cmd.add_option("--shape-sets", o.shape_sets, "Input sets drawn ahead for --shape-range; queries cycle through them")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  cmd.add_option("--input", o.input_files, "User data for an input, NAME=FILE.npy (repeatable; others stay random)");
  cmd.add_option("--int-high", o.int_high, "Integer inputs (token ids) are drawn from [0, N); e.g. the vocabulary size")
      ->check(kAboveZero)
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "Seed of the random input data and arrival times")->capture_default_str();
  cmd.add_option("--perplexity-text", o.perplexity_text,
                 "Language models: after the timed run, perplexity on this text file (its own tokenizer, windows of "
                 "--perplexity-window tokens, the second half of each scored)");
  cmd.add_option("--perplexity-window", o.perplexity_window, "Tokens per perplexity window")
      ->check(CLI::Range(4, 8192))
      ->capture_default_str();
  add_scenario_flags(cmd, o);
}

void add_measurement_flags(CLI::App& cmd, harness::RunOptions& o) {
  cmd.add_option("--threads", o.threads,
                 "Intra-op threads for every backend, a list such as 1,2,4 gives one cell each "
                 "(0: each framework's own default; default: physical cores)")
      ->delimiter(',')
      ->check(kNotNegative);
  cmd.add_option("--inter-op-threads", o.inter_op_threads, "Inter-op threads (0: framework default)")->check(kNotNegative);
  cmd.add_option("--precision", o.precision, "Inference precision requested: fp32, bf16, fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd.add_option("--device", o.device, "Device")->check(CLI::IsMember({"cpu"}))->capture_default_str();
  cmd.add_option("--opt", o.backend_opts, "Framework-specific option KEY=VALUE (see docs/backends.md; repeatable)");
  cmd.add_option("--sessions", o.sessions,
                 "Lanes share one session where the framework can (shared, the default) or each opens its own copy (separate)")
      ->transform(CLI::CheckedTransformer(result::session_sharing_names()));
  add_input_flags(cmd, o);
}

namespace {

// Parses `flags` (flag without dashes, value) into `options` as `infermark run` would.
void parse_flags(const std::vector<std::pair<std::string, std::string>>& flags, harness::RunOptions& options) {
  CLI::App parser;
  add_measurement_flags(parser, options);
  std::vector<std::string> args;
  for (const auto& [flag, value] : flags) {
    args.push_back("--" + flag);
    args.push_back(value);
  }
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed argument vector
  parser.parse(args);
}

// Where in the study file the flag that fails on its own is written; the file alone when only
// the combination fails.
std::string failing_origin(const study::Study& study, const study::StudyCell& cell) {
  const auto fails = [](const std::string& flag, const std::string& value) {
    harness::RunOptions scratch;
    try {
      parse_flags({{flag, value}}, scratch);
      return false;
    } catch (const CLI::ParseError&) {
      return true;
    }
  };
  for (const auto& [flag, value] : study.base)
    if (fails(flag, value)) return study.base_origins.count(flag) ? study.base_origins.at(flag) : study.file.string();
  for (std::size_t i = 0; i < cell.settings.size(); ++i)
    if (fails(cell.settings[i].first, cell.settings[i].second) && i < cell.origins.size()) return cell.origins[i];
  return study.file.string();
}

}  // namespace

harness::RunOptions cell_options(const study::Study& study, const study::StudyCell& cell) {
  harness::RunOptions options;
  options.model = cell.model;
  std::vector<std::pair<std::string, std::string>> flags(study.base.begin(), study.base.end());
  flags.insert(flags.end(), cell.settings.begin(), cell.settings.end());
  try {
    parse_flags(flags, options);
  } catch (const CLI::ParseError& e) {
    throw Error(failing_origin(study, cell) + ": cell " + cell.name + ": " + e.what());
  }
  return options;
}

}  // namespace infermark::cli

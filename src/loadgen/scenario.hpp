// One description of the load to apply — scenario, limits, warm-up and pattern parameters — and
// the runner that applies it to any system under test (local sessions or a remote server).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "loadgen/analysis.hpp"
#include "loadgen/conversation.hpp"
#include "loadgen/patterns.hpp"
#include "loadgen/shared_prefix.hpp"
#include "loadgen/trace.hpp"

namespace infermark::loadgen {

struct RankCoordination;  // rank_share.hpp: several ranks running shares of one scenario

// The closed set of scenarios; each has one row in scenario_table().
enum class Scenario { kSingleStream, kConcurrency, kOffline, kServer, kInteractive, kRamp, kSoak, kPulse, kReplay };

// MLPerf Inference's LLM latency limits, P99 (v5.0, Llama2-70B): Server 2000 ms TTFT and 200 ms
// TPOT; Interactive, added for chat-speed serving, 450 ms and 40 ms (25 tokens/s per user).
struct LlmLimits {
  double ttft_ms = 0, tpot_ms = 0;
};
inline constexpr LlmLimits kMlperfServerLimits{2000, 200};
inline constexpr LlmLimits kMlperfInteractiveLimits{450, 40};

std::string_view name_of(Scenario scenario);
std::string_view name_of(Arrivals arrivals);
std::string_view name_of(Pacing pacing);
// Parse a name; throws infermark::Error naming `flag`, the text and the choices. "generation" (the
// name LLM runs had before every scenario ran them) reads as concurrency.
Scenario parse_scenario(const std::string& text, const std::string& flag = "--scenario");
Arrivals parse_arrivals(const std::string& text, const std::string& flag = "--arrivals");
Pacing parse_pacing(const std::string& text, const std::string& flag = "--pacing");
// "single-stream, concurrency, ..." for help texts and messages.
std::string scenario_choices();
// Name and value of every member, for flag parsers (CLI11's CheckedTransformer).
std::vector<std::pair<std::string, Scenario>> scenario_names();
std::vector<std::pair<std::string, Arrivals>> arrivals_names();
std::vector<std::pair<std::string, Pacing>> pacing_names();

struct ScenarioSpec {
  Scenario name = Scenario::kSingleStream;
  int concurrency = 0;  // clients or lanes; 0: the scenario's default
  // Warm-up (not recorded): whichever of count and time ends later.
  std::uint64_t warmup_queries = 10;
  double warmup_s = 0;
  // Limits of a closed-loop measurement (single-stream, concurrency, offline).
  std::uint64_t min_queries = 1;
  double min_duration_s = 0;
  std::uint64_t max_queries = 100;  // 0: run for max_duration_s
  double max_duration_s = 600;
  // Open loop (server, and the open-loop patterns).
  double qps = 0;  // server: required unless find_max_qps
  Arrivals arrivals = Arrivals::kPoisson;
  Pacing pacing = Pacing::kSpin;
  double duration_s = 10;           // server run / each find-max-qps trial
  double sla_p99_ms = 0;            // 0: no SLA (end-to-end latency for LLMs)
  double ttft_ms = 0, tpot_ms = 0;  // LLM SLOs on each request (0: none); with sla_p99_ms they define goodput
  bool find_max_qps = false;
  std::size_t max_queue = 10'000;
  std::uint64_t seed = 42;
  // Patterns.
  RampBy ramp_by = RampBy::kConcurrency;
  double ramp_step = 10, ramp_start = 0;
  int ramp_steps = 5;             // with until_saturation: the most steps
  bool until_saturation = false;  // rate ramps: stop after the first step that did not keep up
  double step_duration_s = 10;
  double capacity_probe_s = 5;  // closed-loop probe that sizes soak and pulse
  double soak_share = 0.8, soak_duration_s = 1800, soak_interval_s = 10;
  double pulse_baseline_share = 0.5, pulse_burst_share = 2.0;
  double pulse_baseline_s = 10, pulse_burst_s = 10, pulse_recovery_s = 20;
  // Generation (LLMs): prompt and output lengths in tokens, fixed (stddev 0) or drawn per request.
  double prompt_tokens = 128, prompt_tokens_stddev = 0;
  double output_tokens = 32, output_tokens_stddev = 0;
  SharedPrefix shared_prefix;  // prompts in groups that start alike (a prefix before the drawn prompt)
  TraceReplay trace;           // replay: the recorded arrivals and lengths
  Conversation conversation;   // closed loop: each client a user in multi-turn conversations
  std::string dataset;         // LLMs: a text file prompts are cut from ("" : synthetic prompts)
};

// Checks every value before anything runs; throws infermark::Error naming the flag.
void validate(const ScenarioSpec& spec);

// The longest the scenario can take once warmed up, in seconds (its duration caps and phases), so
// a watchdog can tell a slow run from a hung one.
double planned_duration_s(const ScenarioSpec& spec);

// Lanes the scenario needs from the system under test (sessions/slots to prepare).
int lanes_needed(const ScenarioSpec& spec, int logical_cores);

// Server and interactive: one arrival rate (or the highest one within the SLOs).
bool holds_one_rate(Scenario scenario);
// The scenario's own defaults for what was left unset: interactive's TTFT and TPOT limits.
void fill_scenario_defaults(ScenarioSpec& spec);

// Whether latency runs from scheduled arrivals (server, soak, pulse, rate ramps) or from issue.
bool is_open_loop(const ScenarioSpec& spec);

// The targets a single query must meet to count towards goodput.
ServiceTargets service_targets(const ScenarioSpec& spec);
bool has_slo(const ScenarioSpec& spec);

struct ScenarioOutcome {
  std::vector<Phase> phases;                             // measured phases, in order
  std::optional<std::size_t> headline;                   // the phase that gives the cell's summary; none: all merged
  nlohmann::json parameters = nlohmann::json::object();  // what was resolved (capacity, rates, lanes)
  Analysis analysis;                                     // knee, SLA verdict, max QPS, pulse
  std::vector<std::string> group_labels;                 // the sample library's groups (index = group)
  std::int64_t measured_from_ns = 0;                     // monotonic start of the first measured phase (after warm-up)
  bool interrupted = false;
};

// `on_measurement_start` runs once between the warm-up and the first measured query (e.g. to sample
// a server's counters at that moment). With `ranks` (a distributed run; `spec` is this rank's
// share), the ranks warm up, then start together; soak and pulse sum their capacity probes and each
// runs its share of the total; ramp steps start together.
ScenarioOutcome run_scenario(SystemUnderTest& system, const ScenarioSpec& spec, int logical_cores, const std::atomic<bool>* stop,
                             const std::function<void()>& on_measurement_start = {}, const RankCoordination* ranks = nullptr);

// The headline phase and the analysis (SLA verdict, ramp knee, pulse recovery) of an outcome whose
// phases (and, for pulse, parameters["schedule"]) are filled: what each runner concludes, and what
// rank 0 concludes again from the ranks' merged phases. Not for --find-max-qps (its trials decide
// as they run). Soak verdicts need RSS samples: result::record_outcome makes them.
void analyse_outcome(ScenarioOutcome& outcome, const ScenarioSpec& spec);

// A phase's figures; with more than one sample group, latency per group (labelled); with streamed
// requests, TTFT, TPOT, ITL, token rates and goodput.
nlohmann::json phase_json(const Phase& phase, const std::vector<std::string>& group_labels = {});
// Latency by sample group: [{"group", "queries", "p50", "p90", "p99", "mean"} ms], empty for one group.
nlohmann::json latency_by_group_json(const QueryRecorder& recorder, const std::vector<std::string>& group_labels);

// One row per scenario: its name, what it does, and the functions that size and run it. The CLI's
// choices, validation and dispatch all come from here, so a scenario is one row and one runner.
struct ScenarioRow {
  Scenario scenario;
  std::string_view name;
  std::string_view summary;
  double (*planned_duration_s)(const ScenarioSpec&);
  int (*lanes)(const ScenarioSpec&, int logical_cores);
  void (*run)(SystemUnderTest&, const ScenarioSpec&, int lanes, ScenarioOutcome&, const std::atomic<bool>*,
              const RankCoordination* ranks);
};
const std::vector<ScenarioRow>& scenario_table();
const ScenarioRow& row_of(Scenario scenario);

}  // namespace infermark::loadgen

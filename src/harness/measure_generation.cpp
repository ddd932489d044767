#include "harness/measure_generation.hpp"

#include <cmath>

#include "backends/generator.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "probes/environment.hpp"
#include "probes/memory.hpp"
#include "probes/resource_sampler.hpp"

namespace infermark::harness {
namespace {

double ms_since(std::int64_t start_ns) { return static_cast<double>(mono_now_ns() - start_ns) * 1e-6; }

nlohmann::json summary_json(const std::optional<stats::LatencySummary>& summary) {
  return summary ? report::latency_json(*summary) : nlohmann::json(nullptr);
}

// Context per sequence that fits the workload: the longest fixed request, or mean + 4 sigma of a
// drawn one, rounded up to 64 tokens. Sized from the workload because the KV cache of a model's
// full trained context, times C sequences, would not fit in memory for the larger models.
int context_for(const loadgen::GenerationSpec& spec) {
  const double longest = spec.prompt_tokens.mean + 4 * spec.prompt_tokens.stddev + spec.output_tokens.mean +
                         4 * spec.output_tokens.stddev;
  return static_cast<int>(std::ceil(longest / 64.0) * 64);
}

void fill_request_latency(report::RunResult& result, const loadgen::GenerationOutcome& outcome) {
  result.samples_ms.clear();
  for (const auto& r : outcome.requests) result.samples_ms.push_back(static_cast<double>(r.token_ns.back() - r.start_ns) * 1e-6);
  if (result.samples_ms.empty()) return;
  result.percentile_method = "exact";
  result.latency_ms = stats::summarize(result.samples_ms);
  result.throughput.wall_s = outcome.wall_s;
  result.throughput.queries_per_s = outcome.wall_s > 0 ? static_cast<double>(outcome.requests.size()) / outcome.wall_s : 0;
  result.throughput.inferences_per_s = result.throughput.queries_per_s;
}

}  // namespace

loadgen::GenerationSpec generation_spec(const loadgen::ScenarioSpec& s) {
  loadgen::GenerationSpec spec;
  spec.concurrency = std::max(1, s.concurrency);
  spec.warmup_requests = s.warmup_queries;
  spec.requests = s.max_queries;
  spec.max_duration_s = s.max_duration_s;
  spec.prompt_tokens = {s.prompt_tokens, s.prompt_tokens_stddev};
  spec.output_tokens = {s.output_tokens, s.output_tokens_stddev};
  spec.seed = s.seed;
  return spec;
}

nlohmann::json generation_json(const loadgen::GenerationMetrics& m, const loadgen::GenerationSpec& spec) {
  return {{"concurrency", spec.concurrency},
          {"prompt_tokens", {{"mean", spec.prompt_tokens.mean}, {"stddev", spec.prompt_tokens.stddev}, {"total", m.prompt_tokens}}},
          {"output_tokens", {{"mean", spec.output_tokens.mean}, {"stddev", spec.output_tokens.stddev}, {"total", m.output_tokens}}},
          {"requests", m.requests},
          {"steps", m.steps},
          {"wall_s", m.wall_s},
          {"ttft_ms", summary_json(m.ttft_ms)},
          {"tpot_ms", summary_json(m.tpot_ms)},
          {"itl_ms", summary_json(m.itl_ms)},
          {"e2e_ms", summary_json(m.e2e_ms)},
          {"prefill_tokens_per_s", m.prefill_tokens_per_s},
          {"decode_tokens_per_s", m.decode_tokens_per_s},
          {"output_tokens_per_s", m.output_tokens_per_s},
          {"requests_per_s", m.requests_per_s}};
}

report::RunResult measure_generation_cell(const BackendRegistry& registry, const CellRequest& request,
                                          const std::atomic<bool>* stop, const StageCallback& on_stage) {
  return measure_in_stages(request, on_stage, [&](report::RunResult& result, probes::Environment& environment, const auto& enter) {
    enter("loading the backend plugin");
    check_model_file(request.model);
    if (request.scenario.name != "generation")
      throw Error("--scenario " + request.scenario.name + ": " + request.model.string() +
                  " is a language model; it runs the generation scenario (--concurrency C, --prompt-tokens, --output-tokens)");
    loadgen::validate(request.scenario);
    auto backend = registry.load(request.backend);
    result.backend = (*backend)->info();
    environment.libraries[result.backend.framework] = result.backend.version;
    const auto spec = generation_spec(request.scenario);
    auto options = request.options;
    options.expected_concurrency = spec.concurrency;
    if (!options.extras.count("ctx")) options.extras["ctx"] = std::to_string(context_for(spec));
    result.requested = options;

    enter("loading the model");
    const bool peak_reset = probes::reset_peak_rss();
    result.memory.rss_before_load_mb = probes::read_process_memory().rss_mb;
    auto start = mono_now_ns();
    auto generator = (*backend)->open_generator(request.model, options);
    result.timing.load_ms = ms_since(start);
    result.memory.rss_after_load_mb = probes::read_process_memory().rss_mb;
    result.effective_settings = generator->effective_settings();
    result.scenario.parameters["lanes"] = spec.concurrency;
    result.scenario.parameters["batching"] = "continuous: requests join and leave one running batch";
    loadgen::check_generation_spec(spec, *generator);

    enter("running");
    probes::ResourceSampler sampler;
    sampler.start();
    const auto outcome = loadgen::run_generation(*generator, spec, stop);
    const auto resources = sampler.stop();
    const auto metrics = loadgen::summarize_generation(outcome);
    result.generation = generation_json(metrics, spec);
    result.resources = probes::to_json(resources);
    fill_request_latency(result, outcome);
    if (outcome.interrupted) {
      result.status = "interrupted";
      result.error = request.backend + ": stopped by the user; the requests completed until then are kept";
    } else if (outcome.hit_duration_cap) {
      result.status = "interrupted";
      result.error = request.backend + ": --max-duration reached after " + std::to_string(outcome.requests.size()) +
                     " of " + std::to_string(spec.requests) + " requests; those are kept";
    }
    record_peak_memory(result, request, peak_reset);
  });
}

}  // namespace infermark::harness

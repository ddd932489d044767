#include "harness/measure_generation.hpp"

#include <algorithm>
#include <cmath>

#include "backends/generator.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "harness/generator_system.hpp"
#include "harness/perplexity.hpp"
#include "harness/prompt_library.hpp"
#include "probes/environment.hpp"
#include "probes/memory.hpp"
#include "probes/resource_sampler.hpp"

namespace infermark::harness {
namespace {

double ms_since(std::int64_t start_ns) { return static_cast<double>(mono_now_ns() - start_ns) * 1e-6; }

loadgen::LengthDistribution prompt_lengths(const loadgen::ScenarioSpec& s) { return {s.prompt_tokens, s.prompt_tokens_stddev}; }
loadgen::LengthDistribution output_lengths(const loadgen::ScenarioSpec& s) { return {s.output_tokens, s.output_tokens_stddev}; }

// Context per sequence that fits the workload: the longest fixed request, or mean + 4 sigma of a
// drawn one, rounded up to 64 tokens. Sized from the workload because the KV cache of a model's
// full trained context, times C sequences, would not fit in memory for the larger models.
int context_for(const loadgen::ScenarioSpec& s) {
  if (s.trace.enabled()) {
    int longest = 0;
    for (const auto& r : loadgen::load_trace(s.trace)->requests) longest = std::max(longest, r.input_tokens + r.output_tokens);
    return (longest / 64 + 1) * 64;
  }
  const double request = s.prompt_tokens + 4 * s.prompt_tokens_stddev + s.output_tokens + 4 * s.output_tokens_stddev;
  const double prefix = s.shared_prefix.enabled() ? s.shared_prefix.tokens : 0;
  // A conversation's last turn holds every turn's message and answer.
  const double longest = s.conversation.enabled() ? s.conversation.turns * request : prefix + request;
  return static_cast<int>(std::ceil(longest / 64.0) * 64);
}

PromptLibrary prompt_library(const loadgen::ScenarioSpec& spec, const Generator& generator, const TokenSource& tokens) {
  if (spec.trace.enabled()) return PromptLibrary(*loadgen::load_trace(spec.trace), generator, tokens, spec.seed);
  if (spec.conversation.enabled())
    return PromptLibrary(prompt_lengths(spec), output_lengths(spec), generator, tokens, spec.seed, spec.conversation);
  return PromptLibrary(prompt_lengths(spec), output_lengths(spec), generator, tokens, spec.seed, spec.shared_prefix);
}

// After the timed run (peak memory already recorded): a one-slot generator whose context holds one window.
result::PerplexityResult perplexity_on_own_generator(Backend& backend, const result::CellRequest& request) {
  auto options = request.options;
  options.expected_concurrency = 1;
  options.extras["ctx"] = std::to_string(request.perplexity_window);
  auto generator = backend.open_generator(request.model, options);
  return measure_perplexity(*generator, request.perplexity_text, request.perplexity_window);
}

}  // namespace

result::GenerationResult generation_result(const loadgen::GenerationMetrics& m, const loadgen::ScenarioSpec& spec, int lanes) {
  result::GenerationResult g;
  g.concurrency = lanes;
  g.prompt_tokens = {spec.prompt_tokens, spec.prompt_tokens_stddev, m.prompt_tokens};
  g.output_tokens = {spec.output_tokens, spec.output_tokens_stddev, m.output_tokens};
  g.requests = m.requests;
  g.steps = m.steps;
  g.wall_s = m.wall_s;
  g.ttft_ms = m.ttft_ms;
  g.tpot_ms = m.tpot_ms;
  g.itl_ms = m.itl_ms;
  g.e2e_ms = m.e2e_ms;
  g.prefill_tokens_per_s = m.prefill_tokens_per_s;
  g.decode_tokens_per_s = m.decode_tokens_per_s;
  g.output_tokens_per_s = m.output_tokens_per_s;
  g.requests_per_s = m.requests_per_s;
  g.by_group = m.by_group;
  if (spec.shared_prefix.enabled() && m.prefix)
    g.shared_prefix = result::SharedPrefixResult{spec.shared_prefix.groups, spec.shared_prefix.tokens, *m.prefix};
  if (spec.trace.enabled() && m.prefix) {  // a trace's requests grouped by their first recorded block
    const auto trace = loadgen::load_trace(spec.trace);
    g.shared_prefix =
        result::SharedPrefixResult{static_cast<int>(loadgen::first_block_groups(*trace).groups), trace->block_tokens, *m.prefix};
  }
  return g;
}

void add_request_figures(result::GenerationResult& generation, const std::optional<result::HeadlineFigures>& headline) {
  generation.goodput_rps = 0.0;
  if (!headline) return;
  if (headline->duration_s > 0)
    generation.goodput_rps = static_cast<double>(headline->recorder.met_targets()) / headline->duration_s;
  generation.request_latencies = loadgen::latencies_of(headline->recorder.requests());
}

result::RunResult measure_generation_cell(const BackendRegistry& registry, const result::CellRequest& request,
                                          const std::atomic<bool>* stop, const StageCallback& on_stage) {
  return measure_in_stages(
      request, on_stage, [&](result::RunResult& result, probes::Environment& environment, const auto& enter) {
        enter("loading the backend plugin");
        result::check_model_file(request.model);
        const auto& spec = request.scenario;
        loadgen::validate(spec);
        auto backend = registry.load(request.backend);
        result.backend = (*backend)->info();
        require_generators(**backend, request.model);
        environment.libraries[result.backend.framework] = result.backend.version;
        const int lanes = loadgen::lanes_needed(spec, environment.logical_cores);
        auto options = request.options;
        options.expected_concurrency = lanes;
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

        enter(spec.trace.enabled() ? "building the trace's prompts" : "drawing prompts");
        const auto tokens =
            spec.dataset.empty() ? TokenSource::vocabulary(*generator) : TokenSource::corpus(*generator, spec.dataset);
        const auto prompts = prompt_library(spec, *generator, tokens);

        GeneratorSystem system(*generator, prompts, lanes);
        result.scenario.parameters.lanes = lanes;
        result.scenario.parameters.batching = describe(generator->batching());

        enter("running");
        const auto run = loadgen::run_sampled(system, spec, environment.logical_cores, stop,
                                              energy_target_for(options, result.effective_settings));
        const auto headline = result::record_outcome(result, request, run.outcome, run.resources, run.sampler_start_ns);
        if (auto& trace = result.scenario.parameters.trace) trace->requests_shortened = prompts.shortened();
        const double wall_s = headline ? headline->duration_s : 0.0;
        auto metrics =
            loadgen::summarize_requests(headline ? headline->recorder.requests() : std::vector<loadgen::RequestRecord>{}, wall_s);
        metrics.steps = static_cast<int>(system.steps());
        loadgen::label_groups(metrics, prompts);
        auto generation = generation_result(metrics, spec, lanes);
        generation.ttft_from = loadgen::is_open_loop(spec) ? "scheduled arrival (queueing for a slot included)" : "issue";
        add_request_figures(generation, headline);
        if (const auto reused = generator->prompt_tokens_reused(); reused > 0) generation.prompt_tokens_reused = reused;
        generation.prompt_source = tokens.describe();
        result.generation = generation;
        result::record_peak_memory(result, request, peak_reset);
        if (!request.perplexity_text.empty()) {
          enter("scoring the perplexity text");
          result.generation->perplexity = perplexity_on_own_generator(**backend, request);
        }
      });
}

}  // namespace infermark::harness

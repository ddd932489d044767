// Run results built in memory for the compare and recommend tests: latency-like samples,
// summarised with stats::summarize exactly as a real run would be.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "report/result_set.hpp"
#include "stats/latency_summary.hpp"

namespace infermark::testing {

// Right-skewed, latency-like samples around `median_ms`; a fixed seed keeps tests deterministic.
inline std::vector<double> latency_samples(std::size_t n, double median_ms, std::uint64_t seed, double spread = 0.1) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> factor(0.0, spread);
  std::vector<double> samples(n);
  for (double& x : samples) x = median_ms * factor(rng);
  return samples;
}

inline std::vector<double> scaled(std::vector<double> samples, double factor) {
  for (double& x : samples) x *= factor;
  return samples;
}

struct CellSpec {
  std::string backend = "onnxruntime";
  std::string threads = "2";
  std::string model = "resnet50";
  long long batch = 1;
  std::string started_at = "2026-12-02T10:00:00Z";
  double peak_rss_mb = 300.0;
  // served: an `infermark serve` variant's result (scenario "serve", the backend as its variant).
  result::ResultOrigin origin = result::ResultOrigin::kInProcess;
  double weight = 1.0;  // served only: the variant's routing weight
};

// A completed single-stream result whose latency summary, throughput and samples agree.
inline report::LoadedResult synthetic_result(const std::vector<double>& samples_ms, const CellSpec& spec = {},
                                             const std::string& path = "") {
  result::RunResult r;
  r.started_at = spec.started_at;
  r.model.name = spec.model;
  r.model.format = "onnx";
  r.backend.name = spec.backend;
  r.effective_settings.push_back({"intra_op_threads", spec.threads, spec.threads, SettingState::kVerified, ""});
  r.scenario.batch = spec.batch;
  r.latency_ms = stats::summarize(samples_ms);
  r.percentile_method = "exact";
  r.samples_ms = samples_ms;
  r.throughput.queries_per_s = 1000.0 / r.latency_ms->mean;
  r.throughput.inferences_per_s = r.throughput.queries_per_s * static_cast<double>(spec.batch);
  r.memory.peak_rss_mb = spec.peak_rss_mb;
  r.environment = {{"cpu_model", "Test CPU"}, {"cpu_vendor", "GenuineIntel"}, {"cpu_flags_simd", "avx2 fma"}};
  r.origin = spec.origin;
  if (spec.origin == result::ResultOrigin::kServed) {
    r.scenario.name = std::nullopt;  // served traffic, written "serve"
    r.scenario.timed_runs = static_cast<int>(samples_ms.size());
    r.scenario.parameters = result::scenario_parameters_from({{"variant", spec.backend}, {"weight", spec.weight}});
  }
  const auto folder = spec.origin == result::ResultOrigin::kInProcess ? std::string("/results/")
                                                                      : "/results/" + std::string(name_of(spec.origin)) + "/";
  return {r, path.empty() ? folder + spec.model + "." + spec.backend + ".t" + spec.threads + ".json" : path};
}

// A cell whose P99 is close to `median_ms` (narrow spread) and whose peak RSS is `rss_mb`.
inline report::LoadedResult narrow_cell(const std::string& backend, double median_ms, double rss_mb, std::uint64_t seed = 1,
                                        long long batch = 1) {
  return synthetic_result(latency_samples(500, median_ms, seed, 0.02),
                          {.backend = backend, .batch = batch, .peak_rss_mb = rss_mb});
}

// An LLM cell as `infermark run MODEL.gguf` writes it: request latency, a "generation" object with
// TTFT and TPOT summaries, and llama.cpp's recorded parameter count ("" = not recorded).
inline report::LoadedResult llm_cell(double ttft_median_ms, double tpot_median_ms, double rss_mb, const std::string& parameters,
                                     const std::string& threads = "2") {
  auto loaded = synthetic_result(latency_samples(64, 400.0, 3, 0.05),
                                 {.backend = "llamacpp", .threads = threads, .model = "llama-tiny", .peak_rss_mb = rss_mb});
  auto& r = loaded.result;
  r.model.format = "gguf";
  r.generation = result::generation_from(
      {{"concurrency", 1},
       {"prompt_tokens", {{"mean", 128}, {"stddev", 0}, {"total", 8192}}},
       {"output_tokens", {{"mean", 32}, {"stddev", 0}, {"total", 2048}}},
       {"requests", 64},
       {"ttft_ms", result::latency_json(stats::summarize(latency_samples(64, ttft_median_ms, 4, 0.02)))},
       {"tpot_ms", result::latency_json(stats::summarize(latency_samples(64, tpot_median_ms, 5, 0.02)))}});
  if (!parameters.empty()) {
    EffectiveSetting count;  // as llama.cpp records it: no request, the effective count
    count.key = "parameters";
    count.effective = parameters;
    r.effective_settings.push_back(count);
  }
  return loaded;
}

}  // namespace infermark::testing

// Measures one LLM cell: a GGUF model on a generation backend (llama.cpp) under any scenario — each
// lane a sequence slot of one continuously batched generator — and returns its RunResult, whose
// `generation` section carries TTFT, TPOT, inter-token latency, token rates and goodput.
#pragma once

#include "harness/measure_cell.hpp"
#include "loadgen/generation_metrics.hpp"
#include "result/result_builders.hpp"

namespace infermark::harness {

result::RunResult measure_generation_cell(const BackendRegistry& registry, const result::CellRequest& request,
                                          const std::atomic<bool>* stop, const StageCallback& on_stage);

// The result's generation figures from the metrics (schema in docs/result-schema.md, "generation").
result::GenerationResult generation_result(const loadgen::GenerationMetrics& metrics, const loadgen::ScenarioSpec& spec,
                                           int lanes);
// Goodput (requests within every target per second of the phase, 0 without one) and every
// request's latencies, from the headline figures: in-process and remote cells alike.
void add_request_figures(result::GenerationResult& generation, const std::optional<result::HeadlineFigures>& headline);

}  // namespace infermark::harness

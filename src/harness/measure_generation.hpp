// Measures one LLM cell: a GGUF model on a generation backend (llama.cpp) under the generation
// scenario — C requests in flight, continuously batched — and returns its RunResult, whose
// `generation` section carries TTFT, TPOT, inter-token latency and token rates.
#pragma once

#include "harness/measure_cell.hpp"
#include "loadgen/generation_metrics.hpp"

namespace infermark::harness {

report::RunResult measure_generation_cell(const BackendRegistry& registry, const CellRequest& request,
                                          const std::atomic<bool>* stop, const StageCallback& on_stage);

// The generation scenario's loop settings from a cell's scenario flags.
loadgen::GenerationSpec generation_spec(const loadgen::ScenarioSpec& scenario);

// The result JSON of the metrics (schema in docs/result-schema.md, "generation").
nlohmann::json generation_json(const loadgen::GenerationMetrics& metrics, const loadgen::GenerationSpec& spec);

}  // namespace infermark::harness

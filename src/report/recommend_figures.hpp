// What was measured for one completed cell, each figure with where it came from: latency, rate,
// memory, accuracy loss (against labels or the cross-check reference), energy, power, LLM figures,
// model FLOPs.
#pragma once

#include "report/label_accuracy_loss.hpp"
#include "report/perplexity_loss.hpp"
#include "report/recommend.hpp"

namespace infermark::report {

// `labels`: the cell's loss against its family's FP32 reference on labelled inputs, where judged
// so; `perplexity`: a language model's perplexity above its family's higher-precision cell.
CellFigures figures_of(const result::RunResult& r, const Constraints& c, const LabelAccuracyLoss* labels,
                       const PerplexityLoss* perplexity);

// "top-1 vs labels", "agreement with the reference backend", "none".
const char* accuracy_measure_name(AccuracyMeasure measure);

}  // namespace infermark::report

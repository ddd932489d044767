// One cell assessed: its identity, measured figures, constraint checks and the figures asked for
// (cost, machines, GFLOP/s); and the labels that tell a model's cells apart.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/label_accuracy_loss.hpp"
#include "report/perplexity_loss.hpp"
#include "report/recommend.hpp"

namespace infermark::report {

// Each cell's quality loss against its family's reference, by result path: top-1 against labels
// (tensor models) and perplexity (language models).
struct QualityLosses {
  std::map<std::string, LabelAccuracyLoss> labels;
  std::map<std::string, PerplexityLoss> perplexity;
};
QualityLosses quality_losses(const std::vector<LoadedResult>& results);

CellAssessment assess(const LoadedResult& loaded, const std::string& label, const Constraints& c,
                      const std::optional<probes::PeakFlops>& peak, const QualityLosses& losses);

// Labels name the cell; when two runs of one cell are given, the run folder tells them apart.
std::vector<std::string> labels_for(const std::vector<LoadedResult>& cells);

}  // namespace infermark::report

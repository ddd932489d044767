// Accuracy loss against labels, for `recommend --max-accuracy-loss`: where a cell's inputs came
// with labels, its loss is how many points of top-1 accuracy it lost against its family's
// full-precision reference cell on the same labelled inputs (docs/reports.md, "recommend").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

// Which reference a cell's loss against labels was measured from.
enum class LabelReference {
  kCrossCheckReference,  // the family's cross-check reference cell (FP32 on the reference backend)
  kSameBackendFp32,      // no such cell: the family's FP32 (or as-exported) cell on this cell's backend
};

struct LabelAccuracyLoss {
  double top1 = 0.0;            // this cell's top-1 vs labels, share in [0, 1]
  double reference_top1 = 0.0;  // the reference cell's
  std::int64_t samples = 0;     // labelled samples both were judged on
  std::string reference_label;  // "efficientnet-lite0 on onnxruntime"
  LabelReference reference = LabelReference::kCrossCheckReference;
  bool is_reference = false;  // this cell is its own reference

  // Points of top-1 lost (reference minus this cell; negative when this cell scored higher).
  double loss_points() const { return (reference_top1 - top1) * 100.0; }
  // One sample's worth of top-1, in points: how coarse the measure is (7 labels: 14.3 points).
  double points_per_sample() const { return samples > 0 ? 100.0 / static_cast<double>(samples) : 0.0; }
  // "top-1 vs 7 labels, points below efficientnet-lite0 on onnxruntime (85.7%); 1 image = 14.3 points"
  std::string describe() const;
};

// For each result (by its path) that has label accuracy and a reference with label accuracy on
// the same labels file and sample count: the model family (report/model_families), the same
// machine, the reference chosen as LabelReference says. Results without one are absent.
std::map<std::string, LabelAccuracyLoss> label_accuracy_losses(const std::vector<LoadedResult>& results);

}  // namespace infermark::report

// Accuracy of class scores against known labels: the share of samples whose label is the top
// class (top-1) or among the five highest (top-5), beside the agreement with a reference backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"

namespace infermark::stats {

struct LabelAccuracy {
  std::string labels_file;  // where the labels came from
  std::string output;       // the output judged
  std::int64_t samples = 0;
  double top1 = 0.0;  // share in [0, 1]
  double top5 = 0.0;  // share in [0, 1] (the label among the min(5, classes) highest)
};

// `scores` is [samples, classes] (or [samples, ..., classes]: rows over the last axis, one per
// sample). Throws infermark::Error when the row count differs from the label count or a label is
// not a class index of the last axis.
LabelAccuracy label_accuracy(const Tensor& scores, const std::vector<std::int64_t>& labels);

// The result file's "label_accuracy" object, and back (throws nlohmann's exceptions when malformed).
nlohmann::json to_json(const LabelAccuracy& accuracy);
LabelAccuracy label_accuracy_from(const nlohmann::json& json);

}  // namespace infermark::stats

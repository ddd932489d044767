#include "stats/label_accuracy.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace infermark::stats {

LabelAccuracy label_accuracy(const Tensor& scores, const std::vector<std::int64_t>& labels) {
  if (scores.shape.empty()) throw Error("output '" + scores.name + "' is a scalar; class scores need a class axis");
  const auto classes = scores.shape.back();
  const auto values = to_doubles(scores);
  const auto rows = classes > 0 ? static_cast<std::int64_t>(values.size()) / classes : 0;
  if (rows != static_cast<std::int64_t>(labels.size()))
    throw Error("output '" + scores.name + "' " + format_shape(scores.shape) + " holds " + std::to_string(rows) +
                " rows of class scores but there are " + std::to_string(labels.size()) + " labels");
  LabelAccuracy accuracy;
  accuracy.output = scores.name;
  accuracy.samples = rows;
  std::int64_t top1 = 0, top5 = 0;
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto label = labels[static_cast<std::size_t>(row)];
    if (label >= classes)
      throw Error("label " + std::to_string(label) + " of sample " + std::to_string(row) + " is not a class of output '" +
                  scores.name + "' (" + std::to_string(classes) + " classes)");
    const double* first = values.data() + row * classes;
    const double own = first[label];
    // Rank of the label: classes scoring higher, ties counted against it only when earlier (argmax order).
    std::int64_t above = 0;
    for (std::int64_t c = 0; c < classes; ++c)
      if (first[c] > own || (first[c] == own && c < label)) ++above;
    top1 += above == 0;
    top5 += above < 5;
  }
  accuracy.top1 = rows ? static_cast<double>(top1) / static_cast<double>(rows) : 0.0;
  accuracy.top5 = rows ? static_cast<double>(top5) / static_cast<double>(rows) : 0.0;
  return accuracy;
}

nlohmann::json to_json(const LabelAccuracy& a) {
  return {{"labels_file", a.labels_file}, {"output", a.output}, {"samples", a.samples}, {"top1", a.top1}, {"top5", a.top5}};
}

LabelAccuracy label_accuracy_from(const nlohmann::json& j) {
  return {j.at("labels_file").get<std::string>(), j.at("output").get<std::string>(), j.at("samples").get<std::int64_t>(),
          j.at("top1").get<double>(), j.at("top5").get<double>()};
}

}  // namespace infermark::stats

#include "harness/label_check.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/input_labels.hpp"

namespace infermark::harness {

std::optional<stats::LabelAccuracy> check_labels(const std::map<std::string, std::string>& input_files,
                                                 const std::vector<Tensor>& outputs) {
  const auto labels = labels_of_inputs(input_files);
  if (!labels) return std::nullopt;
  if (outputs.empty()) throw Error(labels->file + ": the model gave no outputs to judge");
  const auto named = std::find_if(outputs.begin(), outputs.end(), [&](const Tensor& t) { return t.name == labels->output; });
  if (!labels->output.empty() && named == outputs.end())
    throw Error(labels->file + ": output '" + labels->output + "' is not one of the model's outputs");
  try {
    auto accuracy = stats::label_accuracy(labels->output.empty() ? outputs.front() : *named, labels->labels);
    accuracy.labels_file = labels->file;
    return accuracy;
  } catch (const Error& e) {
    throw Error(labels->file + ": " + e.what());
  }
}

}  // namespace infermark::harness

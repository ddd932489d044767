// The sample library of an in-process tensor model: its input sets (one fixed set, or one per
// drawn shape), grouped by the shapes they feed so latency can be reported per shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::loadgen {

class InputSetLibrary final : public loadgen::SampleLibrary {
 public:
  explicit InputSetLibrary(const std::vector<std::vector<Tensor>>& sets);

  std::uint32_t sample_count() const override { return static_cast<std::uint32_t>(group_of_set_.size()); }
  std::uint32_t group_count() const override { return static_cast<std::uint32_t>(labels_.size()); }
  std::uint32_t group_of(std::uint32_t sample) const override { return group_of_set_[sample]; }
  std::string group_label(std::uint32_t group) const override { return labels_[group]; }
  // Input elements a query of `group` feeds (the work it carries).
  double elements_of_group(std::uint32_t group) const { return elements_[group]; }

 private:
  std::vector<std::uint32_t> group_of_set_;
  std::vector<std::string> labels_;  // "input=1x3x224x224", inputs joined by ", "
  std::vector<double> elements_;
};

}  // namespace infermark::loadgen

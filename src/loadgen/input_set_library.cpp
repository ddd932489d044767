#include "loadgen/input_set_library.hpp"

#include <map>

namespace infermark::loadgen {
namespace {

std::string shape_label(const std::vector<Tensor>& set) {
  std::string label;
  for (const auto& t : set) {
    std::string dims;
    for (auto d : t.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    label += (label.empty() ? "" : ", ") + t.name + "=" + dims;
  }
  return label;
}

}  // namespace

InputSetLibrary::InputSetLibrary(const std::vector<std::vector<Tensor>>& sets) {
  std::map<std::string, std::uint32_t> group_by_label;
  for (const auto& set : sets) {
    const auto label = shape_label(set);
    auto [it, added] = group_by_label.emplace(label, static_cast<std::uint32_t>(labels_.size()));
    if (added) {
      labels_.push_back(label);
      double elements = 0;
      for (const auto& t : set) elements += static_cast<double>(t.element_count());
      elements_.push_back(elements);
    }
    group_of_set_.push_back(it->second);
  }
  if (sets.empty()) {
    group_of_set_.push_back(0);
    labels_.push_back("all");
    elements_.push_back(0);
  }
}

}  // namespace infermark::loadgen

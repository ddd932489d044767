#include "report/label_accuracy_loss.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "report/machine.hpp"
#include "report/model_families.hpp"

namespace infermark::report {
namespace {

bool full_precision(const result::RunResult& r) {
  const auto precision = parse_variant_name(r.model.name).precision;
  return precision == ZooPrecision::kAsExported || precision == ZooPrecision::kFp32;
}

// Judged on the same labelled inputs: the same labels file and as many samples.
bool same_labels(const stats::LabelAccuracy& a, const stats::LabelAccuracy& b) {
  return std::filesystem::path(a.labels_file).filename() == std::filesystem::path(b.labels_file).filename() &&
         a.samples == b.samples;
}

const LoadedResult* find_reference(const std::vector<LoadedResult>& results, const LoadedResult& cell, LabelReference kind) {
  const auto& c = cell.result;
  for (const auto& candidate : results) {
    const auto& r = candidate.result;
    if (!r.label_accuracy || !full_precision(r) || !same_family_on_one_machine(r, c) ||
        !same_labels(*r.label_accuracy, *c.label_accuracy))
      continue;
    if (kind == LabelReference::kCrossCheckReference) {
      if (c.cross_check && r.cross_check && r.cross_check->is_reference && r.backend.name == c.cross_check->reference_backend)
        return &candidate;
    } else if (r.backend.name == c.backend.name) {
      return &candidate;
    }
  }
  return nullptr;
}

}  // namespace

std::string LabelAccuracyLoss::describe() const {
  const auto coarseness = fmt::format("1 sample = {:.3g} points", points_per_sample());
  if (is_reference)
    return fmt::format("top-1 vs {} labels: 0 for the labels reference itself ({:.1f}%); {}", samples, top1 * 100, coarseness);
  return fmt::format("top-1 vs {} labels, points below {} ({:.1f}%{}); {}", samples, reference_label, reference_top1 * 100,
                     reference == LabelReference::kSameBackendFp32 ? "; same backend, no cross-check reference" : "", coarseness);
}

std::map<std::string, LabelAccuracyLoss> label_accuracy_losses(const std::vector<LoadedResult>& results) {
  std::map<std::string, LabelAccuracyLoss> losses;
  for (const auto& cell : results) {
    if (!cell.result.label_accuracy) continue;
    auto kind = LabelReference::kCrossCheckReference;
    const auto* reference = find_reference(results, cell, kind);
    if (!reference) {
      kind = LabelReference::kSameBackendFp32;
      reference = find_reference(results, cell, kind);
    }
    if (!reference) continue;
    const auto& r = reference->result;
    losses[cell.path] = {cell.result.label_accuracy->top1,
                         r.label_accuracy->top1,
                         cell.result.label_accuracy->samples,
                         r.model.name + " on " + r.backend.name,
                         kind,
                         reference == &cell};
  }
  return losses;
}

}  // namespace infermark::report

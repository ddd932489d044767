// Labels that tell the cells of one table or chart apart: the backend, plus every parameter that
// varies among the results labelled together (precision, threads, batch, scenario, concurrency,
// lanes, rate, token lengths, shapes, machine...), and the run folder as a last resort, so no two
// legend entries or table rows read alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

// What a label part names, in the order parts appear in a label.
enum class LabelDimension {
  kModel,
  kBackend,
  kPrecision,
  kThreads,
  kInterOpThreads,
  kDevice,
  kBatch,
  kScenario,
  kConcurrency,
  kLanes,
  kSessions,
  kVariant,
  kRate,
  kTokens,
  kShapes,
  kEndpoint,
  kOptions,
  kMachine,
  kRunFolder,
  kFile,
};

std::string_view dimension_name(LabelDimension dimension);  // "concurrency"

struct LabelPart {
  LabelDimension dimension;
  std::string text;  // as shown: "t2", "C=4", "batch 8"
};

struct CellLabel {
  std::string text;  // the parts joined by spaces: "llamacpp C=4"
  std::vector<LabelPart> parts;
  // The label without one part: the curve a cell is a point of (e.g. without its concurrency).
  std::string without(LabelDimension dimension) const;
};

struct CellLabels {
  std::vector<CellLabel> cells;   // one per result, in the order given
  std::vector<LabelPart> shared;  // parameters every result has alike (not in the labels): "t2", "batch 8"
};

// The backend is always named, then every parameter whose value differs between the results,
// except one that only restates another (lanes that follow the concurrency). Results that are
// still alike get their run folder, then their file name.
CellLabels label_cells(const std::vector<const LoadedResult*>& results);
CellLabels label_cells(const std::vector<LoadedResult>& results);

}  // namespace infermark::report

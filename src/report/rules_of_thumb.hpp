// The seeds' rules of thumb for choosing a framework, each checked against the measured cells so
// the output says when the data agrees with the folklore and when it contradicts it.
#pragma once

#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

using CellRefs = std::vector<const CellAssessment*>;

struct RuleInputs {
  CellRefs completed;                      // cells of one model that completed
  const CellAssessment* winner = nullptr;  // the recommendation (or the best measured when none fits)
  bool x86 = false;                        // the results were measured on an x86 CPU
  bool dynamic_shapes = false;             // the user said inputs vary in shape
};

// One check per rule: latency at batch 1 on x86 -> OpenVINO or ONNX Runtime; throughput ->
// OpenVINO's THROUGHPUT hint or a larger batch; dynamic shapes -> ONNX Runtime; long
// generation -> llama.cpp. A contradicted rule's detail starts "the data contradicts the rule of thumb".
std::vector<RuleCheck> check_rules_of_thumb(const RuleInputs& in);

}  // namespace infermark::report

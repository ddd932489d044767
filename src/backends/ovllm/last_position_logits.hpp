// OpenVINO GenAI computes the language-model head for the last prompt position only (a prompt's
// other logits are never sampled): the same graph change, so that TTFT is comparable with it.
#pragma once

#include <memory>
#include <openvino/core/model.hpp>

namespace infermark {

// Inserts a slice of the last sequence position before the MatMul that produces output "logits".
// Throws infermark::Error when the model has no such MatMul (the model is left unchanged then).
void compute_logits_for_last_position_only(const std::shared_ptr<ov::Model>& model);

}  // namespace infermark

#include "backends/ovllm/last_position_logits.hpp"

#include <limits>
#include <openvino/op/constant.hpp>
#include <openvino/op/matmul.hpp>
#include <openvino/op/slice.hpp>

#include "core/error.hpp"

namespace infermark {

void compute_logits_for_last_position_only(const std::shared_ptr<ov::Model>& model) {
  std::shared_ptr<ov::Node> node;
  try {
    node = model->output("logits").get_node()->input_value(0).get_node_shared_ptr();
  } catch (const ov::Exception&) {
    throw Error("the OpenVINO LLM has no output named logits");
  }
  // Up from the result through element-wise tails (a Convert to f32, a scaling) to the head's MatMul.
  for (int hops = 0; node && hops < 8 && !ov::as_type_ptr<ov::op::v0::MatMul>(node); ++hops)
    node = node->get_input_size() > 0 ? node->input_value(0).get_node_shared_ptr() : nullptr;
  const auto matmul = ov::as_type_ptr<ov::op::v0::MatMul>(node);
  if (!matmul || matmul->get_input_partial_shape(0).rank() != 3)
    throw Error("the OpenVINO LLM's logits do not come from a MatMul over [batch, sequence, hidden] states");
  using ov::op::v0::Constant;
  const auto i64 = ov::element::i64;
  const auto last = std::make_shared<ov::op::v8::Slice>(matmul->input_value(0), Constant::create(i64, {1}, {-1}),
                                                        Constant::create(i64, {1}, {std::numeric_limits<std::int64_t>::max()}),
                                                        Constant::create(i64, {1}, {1}), Constant::create(i64, {1}, {1}));
  matmul->input(0).replace_source_output(last);
  model->validate_nodes_and_infer_types();
}

}  // namespace infermark

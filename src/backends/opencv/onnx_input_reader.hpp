// The declared inputs and outputs of an ONNX model, read straight from its protobuf wire format.
// OpenCV DNN 4.6 does not report them (it drops the dynamic batch dimension and has no API for
// input shapes), so its backend reads them here. Only the few fields needed are decoded; the
// file is memory-mapped and the weights are skipped unread, so they add nothing to peak RSS.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace infermark {

struct OnnxSignature {
  std::vector<TensorSpec> inputs;   // graph inputs that are not initializers (weights)
  std::vector<TensorSpec> outputs;  // graph outputs
};

// Dimensions with a dim_param (or with neither value nor param) are kDynamicDim; dim_names keeps
// the dim_param. Throws infermark::Error naming the file when it cannot be read, is not an ONNX
// model, or declares a tensor infermark cannot represent.
OnnxSignature read_onnx_signature(const std::filesystem::path& model);

// The same from the bytes of a serialized ModelProto; errors do not name a file.
OnnxSignature parse_onnx_signature(std::string_view model_proto);

}  // namespace infermark

// The hand-written ONNX signature reader behind the OpenCV backend: the repository's exported
// models, plus small ModelProtos encoded here for the cases those models do not cover.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/opencv/onnx_input_reader.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

const std::filesystem::path kModels = INFERMARK_MODELS_DIR;

// Minimal protobuf encoder: just enough to write the ONNX fields the reader decodes.
std::string varint(std::uint64_t value) {
  std::string out;
  do {
    const auto low = static_cast<char>(value & 0x7f);
    value >>= 7;
    out += static_cast<char>(low | (value ? 0x80 : 0));
  } while (value);
  return out;
}

std::string varint_field(std::uint32_t field, std::uint64_t value) { return varint(field << 3) + varint(value); }

std::string bytes_field(std::uint32_t field, const std::string& bytes) {
  return varint((field << 3) | 2) + varint(bytes.size()) + bytes;
}

// Dimension: a number is dim_value, a string is dim_param.
std::string dim(std::int64_t value) { return bytes_field(1, varint_field(1, static_cast<std::uint64_t>(value))); }
std::string dim(const std::string& param) { return bytes_field(1, bytes_field(2, param)); }

// ValueInfoProto{name, TypeProto{tensor_type{elem_type, shape{dims}}}}.
std::string tensor_value_info(const std::string& name, std::uint64_t elem_type, const std::string& dims) {
  return bytes_field(1, name) + bytes_field(2, bytes_field(1, varint_field(1, elem_type) + bytes_field(2, dims)));
}

// ModelProto{ir_version, graph{initializers, inputs, outputs}}.
std::string model(const std::string& graph_fields) { return varint_field(1, 8) + bytes_field(7, graph_fields); }
std::string input(const std::string& value_info) { return bytes_field(11, value_info); }
std::string output(const std::string& value_info) { return bytes_field(12, value_info); }
// TensorProto{dims, data_type, name, raw_data}: the weights the reader must skip.
std::string initializer(const std::string& name) {
  return bytes_field(5, varint_field(1, 4) + varint_field(2, 1) + bytes_field(8, name) + bytes_field(9, std::string(16, '\x7f')));
}

std::string error_of(const std::string& proto) {
  try {
    parse_onnx_signature(proto);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OnnxInputReader, ReadsTinyCnnWithItsDynamicBatch) {
  const auto signature = read_onnx_signature(kModels / "tiny_cnn.onnx");
  ASSERT_EQ(signature.inputs.size(), 1u);
  const auto& in = signature.inputs[0];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.dtype, DType::kFloat32);
  EXPECT_EQ(in.shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
  EXPECT_EQ(in.dim_names, (std::vector<std::string>{"batch", "", "", ""}));
  ASSERT_EQ(signature.outputs.size(), 1u);
  EXPECT_EQ(signature.outputs[0].name, "logits");
  EXPECT_EQ(signature.outputs[0].shape, (std::vector<std::int64_t>{kDynamicDim, 10}));
}

TEST(OnnxInputReader, ReadsSymbolicHeightAndWidth) {
  const auto signature = read_onnx_signature(kModels / "tiny_cnn_dynamic_hw.onnx");
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].shape, (std::vector<std::int64_t>{kDynamicDim, 3, kDynamicDim, kDynamicDim}));
  EXPECT_EQ(signature.inputs[0].dim_names, (std::vector<std::string>{"batch", "", "height", "width"}));
}

TEST(OnnxInputReader, LeavesResNetWeightsOutOfTheInputs) {
  const auto signature = read_onnx_signature(kModels / "resnet50.onnx");
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].name, "input");
  EXPECT_EQ(signature.inputs[0].shape, (std::vector<std::int64_t>{kDynamicDim, 3, 224, 224}));
  ASSERT_EQ(signature.outputs.size(), 1u);
  EXPECT_EQ(signature.outputs[0].shape, (std::vector<std::int64_t>{kDynamicDim, 1000}));
}

TEST(OnnxInputReader, DropsInputsThatAreInitializers) {
  // Older exporters (keep_initializers_as_inputs) list weights as graph inputs too.
  const auto proto = model(initializer("weight") + input(tensor_value_info("x", 7, dim(2) + dim("seq"))) +
                           input(tensor_value_info("weight", 1, dim(4))) + output(tensor_value_info("y", 1, dim(2))));
  const auto signature = parse_onnx_signature(proto);
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].name, "x");
  EXPECT_EQ(signature.inputs[0].dtype, DType::kInt64);
  EXPECT_EQ(signature.inputs[0].shape, (std::vector<std::int64_t>{2, kDynamicDim}));
  ASSERT_EQ(signature.outputs.size(), 1u);
  EXPECT_EQ(signature.outputs[0].name, "y");
}

TEST(OnnxInputReader, ADimensionWithNeitherValueNorNameIsDynamic) {
  const auto proto = model(input(tensor_value_info("x", 1, bytes_field(1, "") + dim(3))));
  EXPECT_EQ(parse_onnx_signature(proto).inputs.at(0).shape, (std::vector<std::int64_t>{kDynamicDim, 3}));
}

TEST(OnnxInputReader, RefusesWhatItCannotRepresentNamingTheTensor) {
  EXPECT_NE(error_of(model(input(tensor_value_info("text", 8, dim(1))))).find("'text' has ONNX element type 8"),
            std::string::npos);
  const auto sequence = bytes_field(1, "seq") + bytes_field(2, bytes_field(4, ""));  // TypeProto.sequence_type
  EXPECT_NE(error_of(model(input(sequence))).find("'seq' is not a tensor"), std::string::npos);
}

TEST(OnnxInputReader, RefusesMalformedBytes) {
  EXPECT_NE(error_of("this is not an ONNX protobuf").find("malformed protobuf"), std::string::npos);
  EXPECT_NE(error_of(model(input(tensor_value_info("x", 1, dim(1)))).substr(0, 12)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(varint_field(1, 8)).find("no graph"), std::string::npos);
  EXPECT_NE(error_of(bytes_field(7, "\x08")).find("truncated"), std::string::npos);  // graph ends inside a tag's value
}

TEST(OnnxInputReader, NamesTheFileItCannotRead) {
  const auto text = std::filesystem::temp_directory_path() / "infermark_not_onnx.onnx";
  std::ofstream(text) << "this is not an ONNX protobuf";
  const auto missing = kModels / "no_such_model.onnx";
  for (const auto& path : {text, missing}) {
    try {
      read_onnx_signature(path);
      ADD_FAILURE() << "read " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(text);
}

}  // namespace infermark

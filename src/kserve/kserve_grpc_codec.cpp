#include "kserve/kserve_grpc_codec.hpp"

#include <cstring>

#include <google/protobuf/util/json_util.h>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "kserve/kserve_codec.hpp"

namespace infermark::kserve {
namespace {

RequestError bad_request(const std::string& message) { return RequestError(400, message); }

// "[1,3,-1]": a shape as the client sent it, negative dimensions included.
std::string shape_text(const google::protobuf::RepeatedField<std::int64_t>& shape) {
  std::string text = "[";
  for (int i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// One typed contents list into the tensor's bytes, each value narrowed to `Element`.
template <typename Element, typename Values>
void fill_typed(Tensor& tensor, const Values& values, const std::string& field) {
  const auto count = tensor.element_count();
  if (static_cast<std::size_t>(values.size()) != count)
    throw bad_request(field + ": " + std::to_string(values.size()) + " values for shape " + format_shape(tensor.shape) + " (" +
                      std::to_string(count) + " elements); send them there or in raw_input_contents");
  tensor.data.resize(count * sizeof(Element));
  for (std::size_t i = 0; i < count; ++i) {
    const auto value = static_cast<Element>(values[static_cast<int>(i)]);
    std::memcpy(tensor.data.data() + i * sizeof(Element), &value, sizeof(Element));
  }
}

void fill_from_contents(Tensor& tensor, const inference::InferTensorContents& contents, const std::string& where) {
  const auto field = [&](const char* name) { return where + ".contents." + name; };
  switch (tensor.dtype) {
    case DType::kBool:
      return fill_typed<std::uint8_t>(tensor, contents.bool_contents(), field("bool_contents"));
    case DType::kUInt8:
      return fill_typed<std::uint8_t>(tensor, contents.uint_contents(), field("uint_contents"));
    case DType::kInt8:
      return fill_typed<std::int8_t>(tensor, contents.int_contents(), field("int_contents"));
    case DType::kInt16:
      return fill_typed<std::int16_t>(tensor, contents.int_contents(), field("int_contents"));
    case DType::kInt32:
      return fill_typed<std::int32_t>(tensor, contents.int_contents(), field("int_contents"));
    case DType::kInt64:
      return fill_typed<std::int64_t>(tensor, contents.int64_contents(), field("int64_contents"));
    case DType::kFloat32:
      return fill_typed<float>(tensor, contents.fp32_contents(), field("fp32_contents"));
    case DType::kFloat64:
      return fill_typed<double>(tensor, contents.fp64_contents(), field("fp64_contents"));
    case DType::kFloat16:
    case DType::kBFloat16:
      throw bad_request(where + ": " + std::string(v2_datatype(tensor.dtype)) +
                        " has no typed contents field; send it in raw_input_contents");
  }
}

}  // namespace

grpc::StatusCode grpc_status_code(int http_status) {
  switch (http_status) {
    case 200:
      return grpc::StatusCode::OK;
    case 404:
      return grpc::StatusCode::NOT_FOUND;
    case 429:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case 503:
      return grpc::StatusCode::UNAVAILABLE;
    case 504:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    default:
      return http_status >= 500 ? grpc::StatusCode::INTERNAL : grpc::StatusCode::INVALID_ARGUMENT;
  }
}

std::vector<Tensor> decode_infer_inputs(const inference::ModelInferRequest& request) {
  if (request.inputs().empty()) throw bad_request("inputs: none given");
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size())
    throw bad_request("raw_input_contents: " + std::to_string(request.raw_input_contents_size()) + " entries for " +
                      std::to_string(request.inputs_size()) + " inputs (one per input, in order)");
  std::vector<Tensor> tensors;
  for (int k = 0; k < request.inputs_size(); ++k) {
    const auto& input = request.inputs(k);
    if (input.name().empty()) throw bad_request("inputs[" + std::to_string(k) + "].name: missing");
    Tensor tensor;
    tensor.name = input.name();
    const auto where = "input '" + tensor.name + "'";
    tensor.dtype = parse_v2_datatype(input.datatype(), where);
    for (const auto dim : input.shape()) {
      if (dim < 0) throw bad_request(where + ".shape: dimensions must be non-negative, got " + shape_text(input.shape()));
      tensor.shape.push_back(dim);
    }
    if (raw) {
      if (input.has_contents()) throw bad_request(where + ": contents and raw_input_contents both given; send one of them");
      const auto& bytes = request.raw_input_contents(k);
      const auto expected = tensor.element_count() * dtype_size(tensor.dtype);
      if (bytes.size() != expected)
        throw bad_request(where + ": raw_input_contents[" + std::to_string(k) + "] holds " + std::to_string(bytes.size()) +
                          " bytes, but shape " + format_shape(tensor.shape) + " of " + std::string(v2_datatype(tensor.dtype)) +
                          " needs " + std::to_string(expected));
      const auto* begin = reinterpret_cast<const std::byte*>(bytes.data());
      tensor.data.assign(begin, begin + bytes.size());
    } else {
      fill_from_contents(tensor, input.contents(), where);
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::vector<std::string> requested_outputs(const inference::ModelInferRequest& request) {
  std::vector<std::string> names;
  for (int k = 0; k < request.outputs_size(); ++k) {
    const auto& output = request.outputs(k);
    if (output.name().empty()) throw bad_request("outputs[" + std::to_string(k) + "].name: missing");
    if (output.parameters().count("classification")) throw classification_refused(output.name());
    names.push_back(output.name());
  }
  return names;
}

void encode_infer_outputs(const std::vector<Tensor>& outputs, const std::vector<std::string>& wanted,
                          inference::ModelInferResponse& response) {
  std::vector<std::string> names = wanted;
  if (names.empty())
    for (const auto& output : outputs) names.push_back(output.name);
  std::vector<TensorSpec> produced;
  for (const auto& output : outputs) produced.push_back({output.name, output.dtype, output.shape, {}});
  check_requested_outputs(names, produced);
  for (const auto& name : names)
    for (const auto& output : outputs) {
      if (output.name != name) continue;
      auto& entry = *response.add_outputs();
      entry.set_name(output.name);
      entry.set_datatype(std::string(v2_datatype(output.dtype)));
      for (const auto dim : output.shape) entry.add_shape(dim);
      response.add_raw_output_contents(reinterpret_cast<const char*>(output.data.data()), output.data.size());
      break;
    }
}

void fill_from_json(const nlohmann::json& json, google::protobuf::Message& message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status = google::protobuf::util::JsonStringToMessage(json_text(json), &message, options);
  if (!status.ok()) throw Error("cannot express the " + message.GetTypeName() + " in gRPC: " + status.ToString());
}

}  // namespace infermark::kserve

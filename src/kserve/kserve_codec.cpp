#include "kserve/kserve_codec.hpp"
#include "core/json_text.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <map>

namespace infermark::kserve {
namespace {

using nlohmann::json;

struct DTypeNames {
  DType dtype;
  std::string_view v2;
  std::string_view triton;
};

constexpr DTypeNames kDTypes[] = {
    {DType::kBool, "BOOL", "TYPE_BOOL"},     {DType::kUInt8, "UINT8", "TYPE_UINT8"}, {DType::kInt8, "INT8", "TYPE_INT8"},
    {DType::kInt16, "INT16", "TYPE_INT16"},  {DType::kInt32, "INT32", "TYPE_INT32"}, {DType::kInt64, "INT64", "TYPE_INT64"},
    {DType::kFloat16, "FP16", "TYPE_FP16"},  {DType::kFloat32, "FP32", "TYPE_FP32"}, {DType::kFloat64, "FP64", "TYPE_FP64"},
    {DType::kBFloat16, "BF16", "TYPE_BF16"},
};

const DTypeNames& names_of(DType dtype) {
  for (const auto& row : kDTypes)
    if (row.dtype == dtype) return row;
  throw Error("no KServe v2 name for dtype " + std::string(dtype_name(dtype)));
}

RequestError bad_request(const std::string& message) { return RequestError(400, message); }

std::uint16_t float_to_half(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::int32_t exponent = static_cast<std::int32_t>((bits >> 23) & 0xff) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (exponent <= 0) {                                                    // subnormal or zero
    if (exponent < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // round to nearest even (may carry into the exponent)
  return static_cast<std::uint16_t>(sign | half);
}

std::uint16_t float_to_bfloat16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

void flatten(const json& value, std::vector<const json*>& out) {
  if (value.is_array())
    for (const auto& element : value) flatten(element, out);
  else
    out.push_back(&value);
}

template <typename T>
void store(std::vector<std::byte>& data, std::size_t index, T value) {
  std::memcpy(data.data() + index * sizeof(T), &value, sizeof(T));
}

// JSON "data" (flat or nested, row-major) into the tensor's bytes.
void fill_from_json(Tensor& tensor, const json& data, const std::string& field) {
  std::vector<const json*> values;
  flatten(data, values);
  const auto count = tensor.element_count();
  if (values.size() != count)
    throw bad_request(field + ".data: " + std::to_string(values.size()) + " values for shape " + format_shape(tensor.shape) +
                      " (" + std::to_string(count) + " elements)");
  tensor.data.assign(count * dtype_size(tensor.dtype), std::byte{0});
  for (std::size_t i = 0; i < count; ++i) {
    const json& v = *values[i];
    const auto element = field + ".data[" + std::to_string(i) + "]";
    if (tensor.dtype == DType::kBool) {
      if (!v.is_boolean()) throw bad_request(element + ": BOOL data must be true or false");
      store<std::uint8_t>(tensor.data, i, v.get<bool>() ? 1 : 0);
      continue;
    }
    if (!v.is_number()) throw bad_request(element + ": expected a number, got " + std::string(v.type_name()));
    const bool is_integer_type = tensor.dtype == DType::kUInt8 || tensor.dtype == DType::kInt8 || tensor.dtype == DType::kInt16 ||
                                 tensor.dtype == DType::kInt32 || tensor.dtype == DType::kInt64;
    if (is_integer_type && v.is_number_float())
      throw bad_request(element + ": " + std::string(v2_datatype(tensor.dtype)) + " data must be integers");
    switch (tensor.dtype) {
      case DType::kUInt8:
        store(tensor.data, i, static_cast<std::uint8_t>(v.get<std::int64_t>()));
        break;
      case DType::kInt8:
        store(tensor.data, i, static_cast<std::int8_t>(v.get<std::int64_t>()));
        break;
      case DType::kInt16:
        store(tensor.data, i, static_cast<std::int16_t>(v.get<std::int64_t>()));
        break;
      case DType::kInt32:
        store(tensor.data, i, static_cast<std::int32_t>(v.get<std::int64_t>()));
        break;
      case DType::kInt64:
        store(tensor.data, i, v.get<std::int64_t>());
        break;
      case DType::kFloat16:
        store(tensor.data, i, float_to_half(v.get<float>()));
        break;
      case DType::kBFloat16:
        store(tensor.data, i, float_to_bfloat16(v.get<float>()));
        break;
      case DType::kFloat32:
        store(tensor.data, i, v.get<float>());
        break;
      case DType::kFloat64:
        store(tensor.data, i, v.get<double>());
        break;
      case DType::kBool:
        break;
    }
  }
}

json data_as_json(const Tensor& tensor) {
  json out = json::array();
  const auto count = tensor.element_count();
  switch (tensor.dtype) {
    case DType::kBool:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::uint8_t>()[i] != 0);
      return out;
    case DType::kUInt8:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::uint8_t>()[i]);
      return out;
    case DType::kInt8:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::int8_t>()[i]);
      return out;
    case DType::kInt16:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::int16_t>()[i]);
      return out;
    case DType::kInt32:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::int32_t>()[i]);
      return out;
    case DType::kInt64:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<std::int64_t>()[i]);
      return out;
    case DType::kFloat32:
      for (std::size_t i = 0; i < count; ++i) out.push_back(tensor.as<float>()[i]);
      return out;
    default:
      for (double v : to_doubles(tensor)) out.push_back(v);
      return out;
  }
}

std::vector<std::int64_t> parse_shape_field(const json& input, const std::string& field) {
  if (!input.contains("shape") || !input["shape"].is_array()) throw bad_request(field + ".shape: missing or not an array");
  std::vector<std::int64_t> shape;
  for (const auto& dim : input["shape"]) {
    if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0)
      throw bad_request(field + ".shape: dimensions must be non-negative integers, got " + json_text(input["shape"]));
    shape.push_back(dim.get<std::int64_t>());
  }
  return shape;
}

RequestError unknown_output(const std::string& name, const std::string& names) {
  return bad_request("output '" + name + "': the model has no such output (outputs: " + names + ")");
}

bool binary_flag(const json& object, const char* key) {
  if (!object.is_object() || !object.contains("parameters") || !object["parameters"].is_object()) return false;
  const auto& parameters = object["parameters"];
  return parameters.contains(key) && parameters[key].is_boolean() && parameters[key].get<bool>();
}

}  // namespace

std::string_view v2_datatype(DType dtype) { return names_of(dtype).v2; }
std::string_view triton_config_type(DType dtype) { return names_of(dtype).triton; }

DType parse_v2_datatype(std::string_view name, std::string_view field) {
  for (const auto& row : kDTypes)
    if (row.v2 == name) return row.dtype;
  std::string known;
  for (const auto& row : kDTypes) known += (known.empty() ? "" : ", ") + std::string(row.v2);
  throw bad_request(std::string(field) + ".datatype: '" + std::string(name) + "' is not supported (supported: " + known + ")");
}

InferRequest parse_infer_request(std::string_view body, std::optional<std::size_t> json_length) {
  if (json_length && *json_length > body.size())
    throw bad_request("Inference-Header-Content-Length " + std::to_string(*json_length) + " exceeds the body's " +
                      std::to_string(body.size()) + " bytes");
  const auto header = body.substr(0, json_length.value_or(body.size()));
  std::string_view binary = json_length ? body.substr(*json_length) : std::string_view{};
  const json j = json::parse(header, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw bad_request(json_length ? "the inference header (first " + std::to_string(*json_length) + " bytes) is not a JSON object"
                                  : std::string("the request body is not a JSON object"));
  InferRequest request;
  if (j.contains("id")) {
    if (!j["id"].is_string()) throw bad_request("id: must be a string");
    request.id = j["id"].get<std::string>();
  }
  if (!j.contains("inputs") || !j["inputs"].is_array() || j["inputs"].empty())
    throw bad_request("inputs: missing, empty or not an array");
  request.binary_outputs = binary_flag(j, "binary_data_output");
  std::size_t offset = 0;
  for (std::size_t k = 0; k < j["inputs"].size(); ++k) {
    const auto& input = j["inputs"][k];
    std::string field = "inputs[" + std::to_string(k) + "]";
    if (!input.is_object() || !input.contains("name") || !input["name"].is_string())
      throw bad_request(field + ".name: missing or not a string");
    Tensor tensor;
    tensor.name = input["name"].get<std::string>();
    field = "input '" + tensor.name + "'";
    if (!input.contains("datatype") || !input["datatype"].is_string()) throw bad_request(field + ".datatype: missing");
    tensor.dtype = parse_v2_datatype(input["datatype"].get<std::string>(), field);
    tensor.shape = parse_shape_field(input, field);
    const auto expected_bytes = element_count(tensor.shape) * dtype_size(tensor.dtype);
    const auto& parameters = input.value("parameters", json::object());
    if (parameters.is_object() && parameters.contains("binary_data_size")) {
      if (!json_length) throw bad_request(field + ": binary_data_size given without an Inference-Header-Content-Length header");
      if (!parameters["binary_data_size"].is_number_unsigned())
        throw bad_request(field + ".parameters.binary_data_size: must be a non-negative integer");
      const auto size = parameters["binary_data_size"].get<std::size_t>();
      if (size != expected_bytes)
        throw bad_request(field + ": binary_data_size " + std::to_string(size) + " bytes, but shape " +
                          format_shape(tensor.shape) + " of " + std::string(v2_datatype(tensor.dtype)) + " needs " +
                          std::to_string(expected_bytes));
      if (offset + size > binary.size())
        throw bad_request(field + ": binary data ends after " + std::to_string(binary.size() - offset) + " of " +
                          std::to_string(size) + " bytes");
      const auto* begin = reinterpret_cast<const std::byte*>(binary.data() + offset);
      tensor.data.assign(begin, begin + size);
      offset += size;
    } else {
      if (!input.contains("data")) throw bad_request(field + ".data: missing (and no binary_data_size)");
      fill_from_json(tensor, input["data"], field);
    }
    request.inputs.push_back(std::move(tensor));
  }
  if (offset != binary.size())
    throw bad_request(std::to_string(binary.size() - offset) + " bytes of binary data after the last binary input");
  if (j.contains("outputs")) {
    if (!j["outputs"].is_array()) throw bad_request("outputs: not an array");
    for (std::size_t k = 0; k < j["outputs"].size(); ++k) {
      const auto& output = j["outputs"][k];
      if (!output.is_object() || !output.contains("name") || !output["name"].is_string())
        throw bad_request("outputs[" + std::to_string(k) + "].name: missing or not a string");
      if (output.contains("parameters") && output["parameters"].is_object() && output["parameters"].contains("classification"))
        throw classification_refused(output["name"].get<std::string>());
      request.outputs.push_back({output["name"].get<std::string>(), binary_flag(output, "binary_data")});
    }
  }
  return request;
}

std::vector<Tensor> match_inputs(std::vector<Tensor> inputs, const std::vector<TensorSpec>& specs) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!by_name.emplace(inputs[i].name, i).second) throw bad_request("input '" + inputs[i].name + "' given twice");
  std::string expected;
  for (const auto& spec : specs) expected += (expected.empty() ? "" : ", ") + spec.name;
  // An unknown name first: a misspelt input is the likelier mistake than a missing one.
  for (const auto& tensor : inputs) {
    bool known = false;
    for (const auto& spec : specs) known = known || spec.name == tensor.name;
    if (!known) throw bad_request("input '" + tensor.name + "': the model has no such input (inputs: " + expected + ")");
  }
  std::vector<Tensor> ordered;
  for (const auto& spec : specs) {
    const auto found = by_name.find(spec.name);
    if (found == by_name.end()) throw bad_request("input '" + spec.name + "': missing (the model needs it)");
    auto& tensor = inputs[found->second];
    if (tensor.dtype != spec.dtype)
      throw bad_request("input '" + spec.name + "': datatype " + std::string(v2_datatype(tensor.dtype)) + ", the model expects " +
                        std::string(v2_datatype(spec.dtype)));
    if (tensor.shape.size() != spec.shape.size())
      throw bad_request("input '" + spec.name + "': shape " + format_shape(tensor.shape) + " has rank " +
                        std::to_string(tensor.shape.size()) + ", the model expects " + format_shape(spec.shape, spec.dim_names) +
                        " (rank " + std::to_string(spec.shape.size()) + ")");
    for (std::size_t d = 0; d < spec.shape.size(); ++d)
      if (spec.shape[d] >= 0 && tensor.shape[d] != spec.shape[d])
        throw bad_request("input '" + spec.name + "': shape " + format_shape(tensor.shape) + ", the model expects " +
                          format_shape(spec.shape, spec.dim_names) + " (dimension " + std::to_string(d) + ")");
    if (element_count(tensor.shape) == 0)
      throw bad_request("input '" + spec.name + "': shape " + format_shape(tensor.shape) + " is empty");
    ordered.push_back(std::move(tensor));
  }
  return ordered;
}

RequestError classification_refused(const std::string& output) {
  return bad_request("output '" + output + "': the classification extension is not supported; ask for the raw tensor");
}

void check_requested_outputs(const std::vector<std::string>& names, const std::vector<TensorSpec>& specs) {
  for (const auto& name : names) {
    bool known = false;
    for (const auto& spec : specs) known = known || spec.name == name;
    if (known) continue;
    std::string all;
    for (const auto& spec : specs) all += (all.empty() ? "" : ", ") + spec.name;
    throw unknown_output(name, all);
  }
}

EncodedResponse encode_infer_response(const ResponseHeader& header, const std::vector<Tensor>& outputs,
                                      const InferRequest& request) {
  std::vector<RequestedOutput> wanted = request.outputs;
  if (wanted.empty())
    for (const auto& output : outputs) wanted.push_back({output.name, request.binary_outputs});
  json body{{"model_name", header.model_name}, {"model_version", header.model_version}, {"outputs", json::array()}};
  if (!header.id.empty()) body["id"] = header.id;
  std::string binary;
  for (const auto& want : wanted) {
    const Tensor* found = nullptr;
    for (const auto& output : outputs)
      if (output.name == want.name) found = &output;
    if (!found) {
      std::string names;
      for (const auto& output : outputs) names += (names.empty() ? "" : ", ") + output.name;
      throw unknown_output(want.name, names);
    }
    json entry{{"name", found->name}, {"datatype", v2_datatype(found->dtype)}, {"shape", found->shape}};
    if (want.binary || request.binary_outputs) {
      entry["parameters"] = {{"binary_data_size", found->data.size()}};
      binary.append(reinterpret_cast<const char*>(found->data.data()), found->data.size());
    } else {
      entry["data"] = data_as_json(*found);
    }
    body["outputs"].push_back(std::move(entry));
  }
  EncodedResponse encoded{json_text(body), std::nullopt};
  if (!binary.empty()) {
    encoded.json_length = encoded.body.size();
    encoded.body += binary;
  }
  return encoded;
}

EncodedResponse encode_infer_request(const std::vector<Tensor>& inputs, const std::vector<std::string>& outputs, bool binary) {
  json body{{"inputs", json::array()}};
  std::string raw;
  for (const auto& input : inputs) {
    json entry{{"name", input.name}, {"datatype", v2_datatype(input.dtype)}, {"shape", input.shape}};
    if (binary) {
      entry["parameters"] = {{"binary_data_size", input.data.size()}};
      raw.append(reinterpret_cast<const char*>(input.data.data()), input.data.size());
    } else {
      entry["data"] = data_as_json(input);
    }
    body["inputs"].push_back(std::move(entry));
  }
  if (!outputs.empty()) {
    body["outputs"] = json::array();
    for (const auto& name : outputs) {
      json entry{{"name", name}};
      if (binary) entry["parameters"] = {{"binary_data", true}};
      body["outputs"].push_back(std::move(entry));
    }
  }
  EncodedResponse encoded{json_text(body), std::nullopt};
  if (binary) {
    encoded.json_length = encoded.body.size();
    encoded.body += raw;
  }
  return encoded;
}

std::vector<TensorSpec> parse_tensor_metadata(const json& tensors, const std::string& field) {
  if (!tensors.is_array()) throw bad_request(field + ": missing or not an array");
  std::vector<TensorSpec> specs;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto where = field + "[" + std::to_string(i) + "]";
    const auto& tensor = tensors[i];
    if (!tensor.is_object() || !tensor.contains("name") || !tensor["name"].is_string())
      throw bad_request(where + ".name: missing or not a string");
    if (!tensor.contains("datatype") || !tensor["datatype"].is_string())
      throw bad_request(where + ".datatype: missing or not a string");
    TensorSpec spec;
    spec.name = tensor["name"].get<std::string>();
    spec.dtype = parse_v2_datatype(tensor["datatype"].get<std::string>(), where);
    if (!tensor.contains("shape") || !tensor["shape"].is_array()) throw bad_request(where + ".shape: missing or not an array");
    for (const auto& dim : tensor["shape"]) {
      if (!dim.is_number_integer() || dim.get<std::int64_t>() < -1)
        throw bad_request(where + ".shape: dimensions must be integers, -1 for dynamic, got " + json_text(tensor["shape"]));
      spec.shape.push_back(dim.get<std::int64_t>());
    }
    spec.dim_names.assign(spec.shape.size(), "");
    specs.push_back(std::move(spec));
  }
  return specs;
}

json tensor_metadata(const std::vector<TensorSpec>& specs) {
  json out = json::array();
  for (const auto& spec : specs)
    out.push_back({{"name", spec.name}, {"datatype", v2_datatype(spec.dtype)}, {"shape", spec.shape}});
  return out;
}

}  // namespace infermark::kserve

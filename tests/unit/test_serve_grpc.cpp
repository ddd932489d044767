// The KServe v2 gRPC conversions of `infermark serve`: request inputs (raw and typed contents),
// response outputs, status codes, and messages filled from the HTTP API's JSON documents.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "kserve/kserve_codec.hpp"
#include "kserve/kserve_grpc_codec.hpp"
#include "serve/serve_config.hpp"
#include "unit/request_errors.hpp"

namespace infermark::serve {
namespace {

using inference::ModelInferRequest;

ModelInferRequest::InferInputTensor& add_input(ModelInferRequest& request, const std::string& name, const std::string& datatype,
                                               std::vector<std::int64_t> shape) {
  auto& input = *request.add_inputs();
  input.set_name(name);
  input.set_datatype(datatype);
  for (auto dim : shape) input.add_shape(dim);
  return input;
}

TEST(KServeGrpcCodec, StatusCodesFollowTheHttpStatus) {
  EXPECT_EQ(kserve::grpc_status_code(200), grpc::StatusCode::OK);
  EXPECT_EQ(kserve::grpc_status_code(400), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(kserve::grpc_status_code(404), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(kserve::grpc_status_code(429), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(kserve::grpc_status_code(503), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(kserve::grpc_status_code(504), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(kserve::grpc_status_code(500), grpc::StatusCode::INTERNAL);
}

TEST(KServeGrpcCodec, RawInputsKeepTheirBytes) {
  ModelInferRequest request;
  add_input(request, "x", "FP32", {1, 3});
  add_input(request, "n", "INT64", {2});
  const float x[3] = {1.5f, -2.f, 3.25f};
  const std::int64_t n[2] = {7, -8};
  request.add_raw_input_contents(reinterpret_cast<const char*>(x), sizeof(x));
  request.add_raw_input_contents(reinterpret_cast<const char*>(n), sizeof(n));
  const auto tensors = kserve::decode_infer_inputs(request);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "x");
  EXPECT_EQ(tensors[0].shape, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(std::memcmp(tensors[0].data.data(), x, sizeof(x)), 0);
  EXPECT_EQ(tensors[1].dtype, DType::kInt64);
  EXPECT_EQ(tensors[1].as<std::int64_t>()[1], -8);
}

TEST(KServeGrpcCodec, TypedContentsAreNarrowedToTheDatatype) {
  ModelInferRequest request;
  auto& f = add_input(request, "f", "FP32", {2});
  f.mutable_contents()->add_fp32_contents(0.5f);
  f.mutable_contents()->add_fp32_contents(-1.f);
  auto& i8 = add_input(request, "i8", "INT8", {2});
  i8.mutable_contents()->add_int_contents(-3);
  i8.mutable_contents()->add_int_contents(100);
  auto& u8 = add_input(request, "u8", "UINT8", {1});
  u8.mutable_contents()->add_uint_contents(250);
  auto& b = add_input(request, "b", "BOOL", {2});
  b.mutable_contents()->add_bool_contents(true);
  b.mutable_contents()->add_bool_contents(false);
  const auto tensors = kserve::decode_infer_inputs(request);
  EXPECT_FLOAT_EQ(tensors[0].as<float>()[1], -1.f);
  EXPECT_EQ(tensors[1].data.size(), 2u);
  EXPECT_EQ(tensors[1].as<std::int8_t>()[0], -3);
  EXPECT_EQ(tensors[2].as<std::uint8_t>()[0], 250);
  EXPECT_EQ(tensors[3].as<std::uint8_t>()[0], 1);
  EXPECT_EQ(tensors[3].as<std::uint8_t>()[1], 0);
}

TEST(KServeGrpcCodec, BadInputsNameTheInputAndField) {
  int status = 0;
  EXPECT_NE(request_error([] { kserve::decode_infer_inputs(ModelInferRequest()); }, &status).find("inputs: none given"),
            std::string::npos);
  EXPECT_EQ(status, 400);
  {
    ModelInferRequest request;
    add_input(request, "x", "FP32", {2});
    request.add_raw_input_contents(std::string(4, '\0'));
    EXPECT_NE(request_error([&] {
                kserve::decode_infer_inputs(request);
              }).find("input 'x': raw_input_contents[0] holds 4 bytes, but shape 2 of FP32 needs 8"),
              std::string::npos);
    add_input(request, "y", "FP32", {2});
    EXPECT_NE(request_error([&] { kserve::decode_infer_inputs(request); }).find("raw_input_contents: 1 entries for 2 inputs"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "x", "FP32", {3}).mutable_contents()->add_fp32_contents(1.f);
    EXPECT_NE(request_error([&] {
                kserve::decode_infer_inputs(request);
              }).find("input 'x'.contents.fp32_contents: 1 values for shape 3 (3 elements)"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "x", "INT32", {1}).mutable_contents()->add_fp32_contents(1.f);  // the wrong list
    EXPECT_NE(request_error([&] { kserve::decode_infer_inputs(request); }).find("input 'x'.contents.int_contents: 0 values"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "h", "FP16", {1}).mutable_contents()->add_fp32_contents(1.f);
    EXPECT_NE(request_error([&] { kserve::decode_infer_inputs(request); }).find("FP16 has no typed contents field"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "s", "BYTES", {1});
    EXPECT_NE(request_error([&] { kserve::decode_infer_inputs(request); }).find("input 's'.datatype: 'BYTES' is not supported"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "x", "FP32", {-1, 2});
    EXPECT_NE(request_error([&] {
                kserve::decode_infer_inputs(request);
              }).find("input 'x'.shape: dimensions must be non-negative, got [-1,2]"),
              std::string::npos);
  }
  {
    ModelInferRequest request;
    add_input(request, "x", "FP32", {1}).mutable_contents()->add_fp32_contents(1.f);
    request.add_raw_input_contents(std::string(4, '\0'));
    EXPECT_NE(request_error([&] { kserve::decode_infer_inputs(request); }).find("contents and raw_input_contents both given"),
              std::string::npos);
  }
}

TEST(KServeGrpcCodec, RequestedOutputsRefuseClassification) {
  ModelInferRequest request;
  request.add_outputs()->set_name("logits");
  request.add_outputs()->set_name("probs");
  EXPECT_EQ(kserve::requested_outputs(request), (std::vector<std::string>{"logits", "probs"}));
  (*request.mutable_outputs(1)->mutable_parameters())["classification"].set_int64_param(3);
  EXPECT_NE(request_error([&] { kserve::requested_outputs(request); }).find("output 'probs': the classification extension"),
            std::string::npos);
}

TEST(KServeGrpcCodec, OutputsGoToRawContentsInTheOrderAsked) {
  Tensor a{"a", DType::kFloat32, {1, 2}, std::vector<std::byte>(8)};
  const float values[2] = {0.25f, 4.f};
  std::memcpy(a.data.data(), values, sizeof(values));
  Tensor b{"b", DType::kInt64, {1}, std::vector<std::byte>(8)};
  inference::ModelInferResponse all;
  kserve::encode_infer_outputs({a, b}, {}, all);
  ASSERT_EQ(all.outputs_size(), 2);
  ASSERT_EQ(all.raw_output_contents_size(), 2);
  EXPECT_EQ(all.outputs(0).name(), "a");
  EXPECT_EQ(all.outputs(0).datatype(), "FP32");
  EXPECT_EQ(all.outputs(0).shape_size(), 2);
  EXPECT_EQ(all.outputs(0).shape(1), 2);
  EXPECT_EQ(std::memcmp(all.raw_output_contents(0).data(), values, sizeof(values)), 0);
  EXPECT_EQ(all.outputs(1).datatype(), "INT64");
  inference::ModelInferResponse one;
  kserve::encode_infer_outputs({a, b}, {"b"}, one);
  ASSERT_EQ(one.outputs_size(), 1);
  EXPECT_EQ(one.outputs(0).name(), "b");
  EXPECT_EQ(one.raw_output_contents(0).size(), 8u);
  inference::ModelInferResponse none;
  EXPECT_NE(request_error([&] {
              kserve::encode_infer_outputs({a, b}, {"c"}, none);
            }).find("output 'c': the model has no such output (outputs: a, b)"),
            std::string::npos);
}

TEST(KServeGrpcCodec, RequestedOutputsAreCheckedAgainstTheModel) {
  const std::vector<TensorSpec> specs{{"logits", DType::kFloat32, {-1, 10}, {}}};
  EXPECT_NO_THROW(kserve::check_requested_outputs({"logits"}, specs));
  EXPECT_NE(request_error([&] {
              kserve::check_requested_outputs({"logits", "probs"}, specs);
            }).find("output 'probs': the model has no such output (outputs: logits)"),
            std::string::npos);
}

// The model config JSON as serve/triton_model_config.cpp writes it becomes Triton's ModelConfig.
TEST(KServeGrpcCodec, ModelConfigFromTheTritonJson) {
  const auto json = nlohmann::json::parse(R"({
    "name": "tiny", "platform": "infermark_onnxruntime", "backend": "onnxruntime", "max_batch_size": 8,
    "input": [{"name": "input", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}],
    "output": [{"name": "logits", "data_type": "TYPE_INT64", "dims": [10]}],
    "instance_group": [{"count": 2, "kind": "KIND_CPU"}],
    "dynamic_batching": {"preferred_batch_size": [4, 8], "max_queue_delay_microseconds": 500},
    "parameters": {"batching_note": {"string_value": "why not"}}})");
  inference::ModelConfig config;
  kserve::fill_from_json(json, config);
  EXPECT_EQ(config.name(), "tiny");
  EXPECT_EQ(config.backend(), "onnxruntime");
  EXPECT_EQ(config.max_batch_size(), 8);
  ASSERT_EQ(config.input_size(), 1);
  EXPECT_EQ(config.input(0).data_type(), inference::TYPE_FP32);
  EXPECT_EQ(config.input(0).dims_size(), 3);
  EXPECT_EQ(config.input(0).dims(0), 3);
  EXPECT_EQ(config.output(0).data_type(), inference::TYPE_INT64);
  EXPECT_EQ(config.instance_group(0).count(), 2);
  EXPECT_EQ(config.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(config.dynamic_batching().preferred_batch_size_size(), 2);
  EXPECT_EQ(config.dynamic_batching().max_queue_delay_microseconds(), 500u);
  EXPECT_EQ(config.parameters().at("batching_note").string_value(), "why not");
  // Every Triton type name our codec writes is a value of the enum.
  for (const auto dtype : {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                           DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    inference::ModelInput input;
    EXPECT_NO_THROW(kserve::fill_from_json({{"data_type", kserve::triton_config_type(dtype)}}, input))
        << kserve::triton_config_type(dtype);
    EXPECT_NE(input.data_type(), inference::TYPE_INVALID);
  }
}

TEST(KServeGrpcCodec, StatisticsFromTheHttpJson) {
  const auto json = nlohmann::json::parse(R"({"model_stats": [{
    "name": "tiny", "version": "1", "last_inference": 1700000000000, "inference_count": 12, "execution_count": 5,
    "inference_stats": {"success": {"count": 6, "ns": 900}, "fail": {"count": 1, "ns": 10},
                        "queue": {"count": 6, "ns": 300}, "compute_infer": {"count": 6, "ns": 500},
                        "cache_hit": {"count": 0, "ns": 0}},
    "batch_stats": []}]})");
  inference::ModelStatisticsResponse response;
  kserve::fill_from_json(json, response);
  ASSERT_EQ(response.model_stats_size(), 1);
  const auto& stats = response.model_stats(0);
  EXPECT_EQ(stats.last_inference(), 1700000000000u);
  EXPECT_EQ(stats.inference_count(), 12u);
  EXPECT_EQ(stats.execution_count(), 5u);
  EXPECT_EQ(stats.inference_stats().success().ns(), 900u);
  EXPECT_EQ(stats.inference_stats().queue().count(), 6u);
  EXPECT_EQ(stats.inference_stats().compute_infer().ns(), 500u);
}

TEST(KServeGrpcCodec, MetadataSkipsWhatTheMessageLacks) {
  inference::ModelMetadataResponse metadata;
  kserve::fill_from_json({{"name", "tiny"},
                          {"versions", {"1"}},
                          {"platform", "infermark_openvino"},
                          {"inputs", {{{"name", "input"}, {"datatype", "FP32"}, {"shape", {-1, 3}}}}},
                          {"outputs", nlohmann::json::array()},
                          {"parameters", {{"variants", nlohmann::json::array()}}}},
                         metadata);
  EXPECT_EQ(metadata.platform(), "infermark_openvino");
  ASSERT_EQ(metadata.inputs_size(), 1);
  EXPECT_EQ(metadata.inputs(0).shape(0), -1);
  inference::ServerLiveResponse live;
  EXPECT_THROW(kserve::fill_from_json({{"live", "not a bool"}}, live), Error);
}

TEST(ServeConfig, GrpcPortFromTheServerSection) {
  const auto file = std::filesystem::temp_directory_path() / "infermark_serve_grpc.yaml";
  std::ofstream(file) << "server: {grpc_port: -1}\nmodels:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime}]}\n";
  EXPECT_EQ(load_serve_config(file).grpc_port, -1);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace infermark::serve

// KServe v2 gRPC messages to and from infermark's tensors and documents: the request's inputs
// (raw_input_contents or typed contents), the response's outputs (raw_output_contents), status
// codes, and messages filled from the JSON documents the HTTP API serves. Nothing here knows
// about the server or the variants. Included only by the gRPC front and its tests.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/support/status_code_enum.h>
#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "kserve/proto/grpc_service.pb.h"

namespace infermark::kserve {

// The gRPC code that answers what HTTP answers with `http_status`: 400 INVALID_ARGUMENT,
// 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, 5xx INTERNAL.
grpc::StatusCode grpc_status_code(int http_status);

// The request's input tensors, in request order, from raw_input_contents (one entry per input)
// or from each input's typed contents. Throws RequestError(400) naming the input and the field.
std::vector<Tensor> decode_infer_inputs(const inference::ModelInferRequest& request);
// The names of the outputs asked for, in order (empty: every output). Throws RequestError(400)
// for the classification extension.
std::vector<std::string> requested_outputs(const inference::ModelInferRequest& request);
// Appends `wanted` (empty: every one of `outputs`) to the response: name, datatype and shape in
// `outputs`, the bytes in raw_output_contents. Throws RequestError(400) for a name not produced.
void encode_infer_outputs(const std::vector<Tensor>& outputs, const std::vector<std::string>& wanted,
                          inference::ModelInferResponse& response);

// Fills `message` from JSON that uses the protocol's field names (the HTTP API's documents);
// JSON fields the message does not have are skipped. Throws infermark::Error when a value does
// not fit its field.
void fill_from_json(const nlohmann::json& json, google::protobuf::Message& message);

}  // namespace infermark::kserve

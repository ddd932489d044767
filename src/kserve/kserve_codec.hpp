// KServe v2 inference protocol bodies: JSON tensors and the binary tensor data extension
// (the JSON header is the first Inference-Header-Content-Length bytes; raw tensor bytes follow in
// order). Parsing names the field that is wrong; nothing here knows about HTTP or backends.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace infermark::kserve {

// A request the client got wrong (or could not be served): answered with `status` and the message.
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

std::string_view v2_datatype(DType dtype);  // "FP32"
// Throws RequestError(400) naming `field` for a type infermark cannot feed (BYTES, unknown).
DType parse_v2_datatype(std::string_view name, std::string_view field);
std::string_view triton_config_type(DType dtype);  // "TYPE_FP32", as Triton's model config says it

struct RequestedOutput {
  std::string name;
  bool binary = false;
};

struct InferRequest {
  std::string id;
  std::vector<Tensor> inputs;            // in request order
  std::vector<RequestedOutput> outputs;  // empty: every output
  bool binary_outputs = false;           // the request-level binary_data_output parameter
};

// `json_length`: the Inference-Header-Content-Length header when present.
InferRequest parse_infer_request(std::string_view body, std::optional<std::size_t> json_length);

// The inputs reordered to the model's declared order, after checking names, dtypes, ranks and
// fixed dimensions against `specs`. Throws RequestError(400) naming the input and the mismatch.
std::vector<Tensor> match_inputs(std::vector<Tensor> inputs, const std::vector<TensorSpec>& specs);

// The refusal of an output asked for with the classification extension (not supported).
RequestError classification_refused(const std::string& output);

// Throws RequestError(400) naming the first of `names` the model does not produce.
void check_requested_outputs(const std::vector<std::string>& names, const std::vector<TensorSpec>& specs);

struct EncodedResponse {
  std::string body;
  std::optional<std::size_t> json_length;  // set when binary outputs follow the JSON
};

struct ResponseHeader {
  std::string model_name;
  std::string model_version;
  std::string id;
};

// Throws RequestError(400) when the request names an output the model does not produce.
EncodedResponse encode_infer_response(const ResponseHeader& header, const std::vector<Tensor>& outputs,
                                      const InferRequest& request);

// The client's side: a request carrying `inputs`, as JSON tensors or binary (then `json_length` is
// the Inference-Header-Content-Length), asking for `outputs` by name (empty: every output).
EncodedResponse encode_infer_request(const std::vector<Tensor>& inputs, const std::vector<std::string>& outputs, bool binary);

// The tensors of a metadata response's `field` ("inputs", "outputs"): [{"name","datatype","shape"}],
// -1 for dynamic dimensions. Throws RequestError naming the field.
std::vector<TensorSpec> parse_tensor_metadata(const nlohmann::json& tensors, const std::string& field);

// [{"name","datatype","shape"}] for metadata responses.
nlohmann::json tensor_metadata(const std::vector<TensorSpec>& specs);

}  // namespace infermark::kserve

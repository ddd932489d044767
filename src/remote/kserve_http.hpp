// A KServe v2 / Triton server over HTTP: the model's inputs come from its metadata endpoint, and
// requests carry seeded random tensors (or the user's .npy files) as JSON or with the binary tensor
// extension, rendered before anything is timed (PreparedHttpSystem sends them).
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "net/http_client.hpp"

namespace infermark::remote {

// What the server says about itself and the model (GET /v2, GET /v2/models/{m}[/versions/{v}]).
struct KServeModel {
  std::string server_name, server_version;
  std::vector<std::string> extensions;  // GET /v2's "extensions" (Triton lists binary_tensor_data)
  std::string name, version, platform;
  std::vector<TensorSpec> inputs, outputs;
};

// Throws infermark::Error naming the URL, the status and the server's message when either
// endpoint fails or answers something that is not KServe v2 metadata.
KServeModel read_kserve_model(net::HttpClient& client, const std::string& model, const std::string& version);

// How request tensors travel: kAuto uses the binary tensor extension when the server lists it
// (Triton, infermark serve) and JSON otherwise (MLServer answers binary requests with 500).
enum class TensorEncoding { kAuto, kBinary, kJson };
std::vector<std::pair<std::string, TensorEncoding>> tensor_encoding_names();
// Whether requests use the binary extension, and why, for the result ("binary tensor extension
// (listed by the server)").
struct TensorChoice {
  bool binary = false;
  std::string why;
};
TensorChoice choose_tensor_encoding(TensorEncoding requested, const KServeModel& model);

// One request per input set, rendered before anything is timed (`binary`: the binary tensor
// extension asking for binary outputs; else JSON tensors), for PreparedHttpSystem.
std::vector<net::PreparedRequestPtr> prepare_kserve_requests(const net::HttpClient& client, const KServeModel& model,
                                                             const std::vector<std::vector<Tensor>>& sets, bool binary);

}  // namespace infermark::remote

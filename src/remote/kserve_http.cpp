#include "remote/kserve_http.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"
#include "remote/remote_errors.hpp"

namespace infermark::remote {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

json get_json(net::HttpClient& client, const std::string& target) {
  const auto where = client.endpoint().url + target;
  const auto response = client.send_and_wait({http::verb::get, target, {}, {}});
  if (response.error != net::TransportError::kNone) throw Error(where + ": " + response.error_text);
  if (response.status != 200) throw Error(where + ": " + http_error_text(response.status, response.body));
  auto parsed = json::parse(response.body, nullptr, false);
  if (!parsed.is_object()) throw Error(where + ": the answer is not a JSON object: " + response.body.substr(0, 300));
  return parsed;
}

std::string text_field(const json& object, const char* key) {
  return object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : std::string();
}

}  // namespace

KServeModel read_kserve_model(net::HttpClient& client, const std::string& model, const std::string& version) {
  KServeModel out;
  const auto server = get_json(client, "/v2");
  out.server_name = text_field(server, "name");
  out.server_version = text_field(server, "version");
  if (server.contains("extensions") && server["extensions"].is_array())
    for (const auto& extension : server["extensions"])
      if (extension.is_string()) out.extensions.push_back(extension.get<std::string>());
  const auto target = "/v2/models/" + model + (version.empty() ? "" : "/versions/" + version);
  const auto metadata = get_json(client, target);
  out.name = text_field(metadata, "name");
  if (out.name.empty()) out.name = model;
  out.version = version;
  if (version.empty() && metadata.contains("versions") && metadata["versions"].is_array() && !metadata["versions"].empty() &&
      metadata["versions"].front().is_string())
    out.version = metadata["versions"].front().get<std::string>();
  out.platform = text_field(metadata, "platform");
  try {
    out.inputs = kserve::parse_tensor_metadata(metadata.value("inputs", json()), "inputs");
    if (metadata.contains("outputs") && metadata["outputs"].is_array())
      out.outputs = kserve::parse_tensor_metadata(metadata["outputs"], "outputs");
  } catch (const Error& e) {
    throw Error(client.endpoint().url + target + ": model metadata: " + e.what());
  }
  if (out.inputs.empty())
    throw Error(client.endpoint().url + target +
                ": the model's metadata declares no inputs (MLServer needs them in "
                "model-settings.json), so infermark cannot build requests");
  return out;
}

std::vector<std::pair<std::string, TensorEncoding>> tensor_encoding_names() {
  return {{"auto", TensorEncoding::kAuto}, {"binary", TensorEncoding::kBinary}, {"json", TensorEncoding::kJson}};
}

TensorChoice choose_tensor_encoding(TensorEncoding requested, const KServeModel& model) {
  switch (requested) {
    case TensorEncoding::kBinary:
      return {true, "binary tensor extension (--tensors binary)"};
    case TensorEncoding::kJson:
      return {false, "JSON (--tensors json)"};
    case TensorEncoding::kAuto:
      break;
  }
  const bool listed = std::find(model.extensions.begin(), model.extensions.end(), "binary_tensor_data") != model.extensions.end();
  return listed ? TensorChoice{true, "binary tensor extension (the server lists binary_tensor_data)"}
                : TensorChoice{false, "JSON (the server does not list the binary_tensor_data extension)"};
}

std::vector<net::PreparedRequestPtr> prepare_kserve_requests(const net::HttpClient& client, const KServeModel& model,
                                                             const std::vector<std::vector<Tensor>>& sets, bool binary) {
  const auto target = "/v2/models/" + model.name + (model.version.empty() ? "" : "/versions/" + model.version) + "/infer";
  std::vector<std::string> outputs;
  for (const auto& output : model.outputs) outputs.push_back(output.name);
  std::vector<net::PreparedRequestPtr> requests;
  for (const auto& set : sets) {
    auto encoded = kserve::encode_infer_request(set, outputs, binary);
    net::ClientRequest request{http::verb::post, target, std::move(encoded.body), {}};
    if (encoded.json_length) {
      request.headers.push_back({"Content-Type", "application/octet-stream"});
      request.headers.push_back({"Inference-Header-Content-Length", std::to_string(*encoded.json_length)});
    } else {
      request.headers.push_back({"Content-Type", "application/json"});
    }
    requests.push_back(client.prepare(std::move(request)));
  }
  return requests;
}

}  // namespace infermark::remote

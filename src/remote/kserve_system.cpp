#include "remote/kserve_system.hpp"


#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "serve/kserve_codec.hpp"

namespace infermark::remote {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

json get_json(net::HttpClient& client, const std::string& target) {
  const auto where = client.endpoint().url + target;
  const auto response = client.send_and_wait({http::verb::get, target, {}, {}});
  if (response.error != net::TransportError::kNone) throw Error(where + ": " + response.error_text);
  if (response.status != 200)
    throw Error(where + ": HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 300));
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
    out.inputs = serve::parse_tensor_metadata(metadata.value("inputs", json()), "inputs");
    if (metadata.contains("outputs") && metadata["outputs"].is_array())
      out.outputs = serve::parse_tensor_metadata(metadata["outputs"], "outputs");
  } catch (const Error& e) {
    throw Error(client.endpoint().url + target + ": model metadata: " + e.what());
  }
  if (out.inputs.empty())
    throw Error(client.endpoint().url + target + ": the model's metadata declares no inputs (MLServer needs them in "
                "model-settings.json), so infermark cannot build requests");
  return out;
}

KServeSystem::KServeSystem(net::HttpClient& client, const KServeModel& model, const std::vector<std::vector<Tensor>>& sets,
                           bool binary, int lanes, RemoteErrors& errors)
    : client_(client),
      target_("/v2/models/" + model.name + (model.version.empty() ? "" : "/versions/" + model.version) + "/infer"),
      library_(sets),
      lanes_(lanes),
      errors_(errors) {
  std::vector<std::string> outputs;
  for (const auto& output : model.outputs) outputs.push_back(output.name);
  for (const auto& set : sets) {
    auto encoded = serve::encode_infer_request(set, outputs, binary);
    bodies_.push_back({std::move(encoded.body), encoded.json_length ? std::to_string(*encoded.json_length) : ""});
  }
}

net::ClientRequest KServeSystem::request_for(std::uint32_t sample) const {
  const auto& body = bodies_[sample];
  net::ClientRequest request{http::verb::post, target_, body.bytes, {}};
  if (body.header_length.empty()) {
    request.headers.push_back({"Content-Type", "application/json"});
  } else {
    request.headers.push_back({"Content-Type", "application/octet-stream"});
    request.headers.push_back({"Inference-Header-Content-Length", body.header_length});
  }
  return request;
}

void KServeSystem::start(const loadgen::Query& query, loadgen::Completion&, std::function<void(bool)> done) {
  client_.send(request_for(query.sample), [this, done = std::move(done)](net::ClientResponse response) {
    done(errors_.check(response));
  });
}

void KServeSystem::issue(int, const loadgen::Query& query, loadgen::Completion& completion) {
  loadgen::start_and_wait(*this, query, completion);
}

}  // namespace infermark::remote

// A KServe v2 / Triton server as a system under test over HTTP: the model's inputs come from its
// metadata endpoint, requests carry seeded random tensors (or the user's .npy files) as JSON or
// with the binary tensor extension, prepared before anything is timed; queries run asynchronously,
// many in flight on few threads.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "harness/input_set_library.hpp"
#include "loadgen/system_under_test.hpp"
#include "net/http_client.hpp"
#include "remote/remote_errors.hpp"

namespace infermark::remote {

// What the server says about itself and the model (GET /v2, GET /v2/models/{m}[/versions/{v}]).
struct KServeModel {
  std::string server_name, server_version;
  std::string name, version, platform;
  std::vector<TensorSpec> inputs, outputs;
};

// Throws infermark::Error naming the URL, the status and the server's message when either
// endpoint fails or answers something that is not KServe v2 metadata.
KServeModel read_kserve_model(net::HttpClient& client, const std::string& model, const std::string& version);

class KServeSystem final : public loadgen::SystemUnderTest {
 public:
  // One request body per input set; `binary`: the binary tensor extension (else JSON tensors).
  KServeSystem(net::HttpClient& client, const KServeModel& model, const std::vector<std::vector<Tensor>>& sets, bool binary,
               int lanes, RemoteErrors& errors);

  int lanes() const override { return lanes_; }
  const loadgen::SampleLibrary& samples() const override { return library_; }
  bool asynchronous() const override { return true; }
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;
  void start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) override;

 private:
  struct Body {
    std::string bytes;
    std::string header_length;  // Inference-Header-Content-Length; "" for JSON
  };
  net::ClientRequest request_for(std::uint32_t sample) const;

  net::HttpClient& client_;
  std::string target_;
  std::vector<Body> bodies_;
  harness::InputSetLibrary library_;
  int lanes_;
  RemoteErrors& errors_;
};

}  // namespace infermark::remote

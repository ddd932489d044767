// A KServe v2 / Triton server as a system under test over gRPC (inference.GRPCInferenceService,
// the protocol Triton's clients and perf_analyzer default to): metadata from ServerMetadata and
// ModelMetadata, requests with raw_input_contents built once per input set, ModelInfer calls
// asynchronous on gRPC's callback API, many in flight on one channel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "loadgen/input_set_library.hpp"
#include "loadgen/system_under_test.hpp"
#include "remote/kserve_http.hpp"
#include "remote/remote_errors.hpp"

namespace infermark::remote {

// "host:port" from "host:port", "grpc://host:port" or "http://host:port"; throws infermark::Error
// naming `flag` for anything else.
std::string grpc_target(const std::string& url, const std::string& flag);

class KServeGrpcSystem final : public loadgen::SystemUnderTest {
 public:
  // Connects to `target`; throws infermark::Error naming it when the server does not answer.
  KServeGrpcSystem(const std::string& target, double timeout_s, RemoteErrors& errors);
  ~KServeGrpcSystem() override;

  // The server's identity and the model's tensors; throws infermark::Error with the gRPC status.
  KServeModel read_model(const std::string& model, const std::string& version);
  // One ModelInferRequest per input set (must be called before queries start).
  void prepare(const KServeModel& model, const std::vector<std::vector<Tensor>>& sets, int lanes);

  int lanes() const override { return lanes_; }
  const loadgen::SampleLibrary& samples() const override { return *library_; }
  bool asynchronous() const override { return true; }
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;
  void start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) override;

 private:
  struct Connection;
  std::unique_ptr<Connection> connection_;
  std::string target_;
  double timeout_s_;
  std::unique_ptr<loadgen::InputSetLibrary> library_;
  int lanes_ = 1;
  RemoteErrors& errors_;
};

}  // namespace infermark::remote

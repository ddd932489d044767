#include "remote/kserve_grpc_system.hpp"

#include <chrono>

#include <grpcpp/grpcpp.h>

#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"
#include "kserve/proto/grpc_service.grpc.pb.h"

namespace infermark::remote {
namespace {

std::chrono::system_clock::time_point deadline_in(double seconds) {
  return std::chrono::system_clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(seconds * 1e6));
}

std::vector<TensorSpec> tensor_specs(
    const google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>& tensors,
    const std::string& field) {
  std::vector<TensorSpec> specs;
  for (int i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    TensorSpec spec;
    spec.name = t.name();
    spec.dtype = kserve::parse_v2_datatype(t.datatype(), field + "[" + std::to_string(i) + "]");
    spec.shape.assign(t.shape().begin(), t.shape().end());
    spec.dim_names.assign(spec.shape.size(), "");
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string status_text(const grpc::Status& status) {
  return "gRPC " + std::to_string(static_cast<int>(status.error_code())) + ": " + status.error_message();
}

}  // namespace

struct KServeGrpcSystem::Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub;
  std::vector<inference::ModelInferRequest> requests;  // one per input set; read concurrently, never changed
};

std::string grpc_target(const std::string& url, const std::string& flag) {
  std::string rest = url;
  for (const std::string scheme : {"grpc://", "http://"})
    if (rest.rfind(scheme, 0) == 0) rest = rest.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (rest.empty() || rest.find('/') != std::string::npos || colon == std::string::npos || colon + 1 == rest.size() ||
      rest.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    throw Error(flag + ": '" + url + "' is not a gRPC address: give HOST:PORT (or grpc://HOST:PORT)");
  return rest;
}

KServeGrpcSystem::KServeGrpcSystem(const std::string& target, double timeout_s, RemoteErrors& errors)
    : connection_(std::make_unique<Connection>()), target_(target), timeout_s_(timeout_s), errors_(errors) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  arguments.SetMaxSendMessageSize(-1);
  connection_->channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments);
  if (!connection_->channel->WaitForConnected(deadline_in(std::min(timeout_s, 10.0))))
    throw Error(target + ": no gRPC server answers there");
  connection_->stub = inference::GRPCInferenceService::NewStub(connection_->channel);
}

KServeGrpcSystem::~KServeGrpcSystem() = default;

KServeModel KServeGrpcSystem::read_model(const std::string& model, const std::string& version) {
  KServeModel out;
  {
    grpc::ClientContext context;
    context.set_deadline(deadline_in(timeout_s_));
    inference::ServerMetadataRequest request;
    inference::ServerMetadataResponse response;
    const auto status = connection_->stub->ServerMetadata(&context, request, &response);
    if (!status.ok()) throw Error(target_ + ": ServerMetadata: " + status_text(status));
    out.server_name = response.name();
    out.server_version = response.version();
  }
  grpc::ClientContext context;
  context.set_deadline(deadline_in(timeout_s_));
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelMetadataResponse response;
  const auto status = connection_->stub->ModelMetadata(&context, request, &response);
  if (!status.ok()) throw Error(target_ + ": ModelMetadata '" + model + "': " + status_text(status));
  out.name = response.name().empty() ? model : response.name();
  out.version = version.empty() && response.versions_size() > 0 ? response.versions(0) : version;
  out.platform = response.platform();
  try {
    out.inputs = tensor_specs(response.inputs(), "inputs");
    out.outputs = tensor_specs(response.outputs(), "outputs");
  } catch (const Error& e) {
    throw Error(target_ + ": ModelMetadata '" + model + "': " + e.what());
  }
  if (out.inputs.empty()) throw Error(target_ + ": ModelMetadata '" + model + "' declares no inputs");
  return out;
}

void KServeGrpcSystem::prepare(const KServeModel& model, const std::vector<std::vector<Tensor>>& sets, int lanes) {
  library_ = std::make_unique<loadgen::InputSetLibrary>(sets);
  lanes_ = lanes;
  for (const auto& set : sets) {
    inference::ModelInferRequest request;
    request.set_model_name(model.name);
    request.set_model_version(model.version);
    for (const auto& tensor : set) {
      auto* input = request.add_inputs();
      input->set_name(tensor.name);
      input->set_datatype(std::string(kserve::v2_datatype(tensor.dtype)));
      for (auto d : tensor.shape) input->add_shape(d);
      request.add_raw_input_contents(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
    }
    for (const auto& output : model.outputs) request.add_outputs()->set_name(output.name);
    connection_->requests.push_back(std::move(request));
  }
}

void KServeGrpcSystem::start(const loadgen::Query& query, loadgen::Completion&, std::function<void(bool)> done) {
  struct Call {
    grpc::ClientContext context;
    inference::ModelInferResponse response;
  };
  auto call = std::make_shared<Call>();
  call->context.set_deadline(deadline_in(timeout_s_));
  connection_->stub->async()->ModelInfer(&call->context, &connection_->requests[query.sample], &call->response,
                                         [this, call, done = std::move(done)](grpc::Status status) {
                                           if (!status.ok()) errors_.count_grpc(status.error_code(), status_text(status));
                                           done(status.ok());
                                         });
}

void KServeGrpcSystem::issue(int, const loadgen::Query& query, loadgen::Completion& completion) {
  loadgen::start_and_wait(*this, query, completion);
}

}  // namespace infermark::remote

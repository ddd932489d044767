// What `infermark serve` spends decoding a KServe v2 request and encoding its answer, per request,
// for the tensor sizes of the server-overhead measurement (docs/serving.md): a [1,3,32,32] FP32
// input as binary data, a [1,10] FP32 output as JSON numbers or binary.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "kserve/kserve_codec.hpp"

namespace {

using namespace infermark;
using namespace infermark::kserve;

struct BinaryRequest {
  std::string body;
  std::size_t header_length = 0;
};

BinaryRequest tiny_cnn_request() {
  const std::size_t bytes = 4 * 3 * 32 * 32;
  const auto header =
      nlohmann::json{
          {"inputs",
           {{{"name", "input"}, {"shape", {1, 3, 32, 32}}, {"datatype", "FP32"}, {"parameters", {{"binary_data_size", bytes}}}}}}}
          .dump();
  return {header + std::string(bytes, '\0'), header.size()};
}

std::vector<Tensor> tiny_cnn_outputs() {
  Tensor logits{"logits", DType::kFloat32, {1, 10}, {}};
  logits.data.resize(40);
  auto* values = reinterpret_cast<float*>(logits.data.data());
  for (int i = 0; i < 10; ++i) values[i] = 0.1234567f * static_cast<float>(i) - 0.5f;
  return {logits};
}

void BM_ParseBinaryRequest(benchmark::State& state) {
  const auto request = tiny_cnn_request();
  for (auto _ : state) {
    auto parsed = parse_infer_request(request.body, request.header_length);
    benchmark::DoNotOptimize(parsed);
  }
}
BENCHMARK(BM_ParseBinaryRequest);

void BM_EncodeResponse(benchmark::State& state) {
  const auto outputs = tiny_cnn_outputs();
  InferRequest request;
  request.binary_outputs = state.range(0) != 0;
  for (auto _ : state) {
    auto encoded = encode_infer_response({"tiny_cnn", "1", ""}, outputs, request);
    benchmark::DoNotOptimize(encoded);
  }
}
BENCHMARK(BM_EncodeResponse)->ArgName("binary")->Arg(0)->Arg(1);

}  // namespace

// Peer for infermark's mnn numbers on the same library: a plain timed loop over MNN's C++ API
// against third_party/mnn/install's libMNN.so, set as infermark's mnn backend sets it (one CPU
// session, Precision_High, numThread), each timed run the input copied in (the session reuses its
// input's memory during an inference, as the backend does) and runSession. Compiled by
// tools/peers/edge_fidelity.py. Prints {"p50_ms", "mean_ms", "runs", "version"} as JSON.
//   mnn_timed_loop MODEL.mnn INPUT_NAME INPUT.raw N C H W THREADS WARMUP RUNS
#include <MNN/MNNDefine.h>
#include <MNN/Interpreter.hpp>
#include <MNN/Tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 11) {
    std::fprintf(stderr, "usage: %s MODEL.mnn INPUT_NAME INPUT.raw N C H W THREADS WARMUP RUNS\n", argv[0]);
    return 2;
  }
  const std::vector<int> shape{std::stoi(argv[4]), std::stoi(argv[5]), std::stoi(argv[6]), std::stoi(argv[7])};
  const int threads = std::stoi(argv[8]), warmup = std::stoi(argv[9]), runs = std::stoi(argv[10]);
  std::vector<float> data(static_cast<std::size_t>(shape[0]) * shape[1] * shape[2] * shape[3]);
  std::ifstream(argv[3], std::ios::binary)
      .read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  std::unique_ptr<MNN::Interpreter, void (*)(MNN::Interpreter*)> net(MNN::Interpreter::createFromFile(argv[1]),
                                                                     MNN::Interpreter::destroy);
  if (!net) return 1;
  MNN::ScheduleConfig config;
  config.type = MNN_FORWARD_CPU;
  config.numThread = threads;
  MNN::BackendConfig backend;
  backend.precision = MNN::BackendConfig::Precision_High;
  config.backendConfig = &backend;
  auto* session = net->createSession(config);
  auto* input = net->getSessionInput(session, argv[2]);
  net->resizeTensor(input, shape);
  net->resizeSession(session);
  std::unique_ptr<MNN::Tensor> host(MNN::Tensor::create(shape, halide_type_of<float>(), data.data(), MNN::Tensor::CAFFE));
  input->copyFromHostTensor(host.get());
  const auto once = [&] {
    input->copyFromHostTensor(host.get());
    net->runSession(session);
  };
  for (int i = 0; i < warmup; ++i) once();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto started = std::chrono::steady_clock::now();
    once();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  }
  auto sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double p50 =
      sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf("{\"p50_ms\": %.6f, \"mean_ms\": %.6f, \"runs\": %zu, \"version\": \"%s\"}\n", p50,
              std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size()), times.size(),
              MNN::getVersion());
  return 0;
}

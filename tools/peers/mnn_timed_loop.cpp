// Peer for infermark's mnn numbers on the same library: a plain timed loop over MNN's C++ API
// against third_party/mnn/install's libMNN.so, set as infermark's mnn backend sets it (one CPU
// session, Precision_High, numThread), each timed run the input copied in (the session reuses its
// input's memory during an inference, as the backend does) and runSession. Compiled by
// tools/peers/edge_fidelity.py. Prints {"p50_ms", "mean_ms", "runs", "version"} as JSON.
//   mnn_timed_loop MODEL.mnn INPUT_NAME INPUT.raw N C H W THREADS WARMUP RUNS
#include <MNN/MNNDefine.h>
#include <MNN/Interpreter.hpp>
#include <MNN/Tensor.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "timed_loop.hpp"

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
  print_timed_loop(once, warmup, runs, std::string(", \"version\": \"") + MNN::getVersion() + "\"");
  return 0;
}

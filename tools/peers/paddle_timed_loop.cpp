// Peer for infermark's paddle numbers on the same library: a plain timed loop over Paddle
// Inference's C++ API (the declarations src/backends/paddle/ makes for 3.3.1) against
// third_party/paddle-venv's libpaddle.so, configured as infermark's paddle backend configures it
// (CPU, oneDNN, SetCpuMathLibraryNumThreads), each timed run the input reshaped and copied in and
// Run(), as Paddle's own demo programs time it. Compiled by tools/peers/edge_fidelity.py.
// Prints {"p50_ms", "mean_ms", "runs"} as JSON (timed_loop.hpp).
//   paddle_timed_loop MODEL.paddle INPUT.raw N C H W THREADS WARMUP RUNS
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "backends/paddle/paddle_inference_api.hpp"
#include "timed_loop.hpp"

int main(int argc, char** argv) {
  auto args = parse_loop_arguments(argc, argv, "MODEL.paddle");
  const auto& shape = args.shape;
  auto& data = args.input;
  const int threads = args.threads, warmup = args.warmup, runs = args.runs;
  alignas(64) static std::array<std::byte, 16384> room{};  // paddle::AnalysisConfig is about 1.6 KB in 3.3.1
  auto* config = new (room.data()) paddle::AnalysisConfig();
  const std::string folder = args.model;
  config->SetModel(folder + "/model.json", folder + "/model.pdiparams");
  config->DisableGpu();
  config->EnableMKLDNN();
  config->DeletePass("operator_reshape_onednn_fuse_pass");  // as the backend: broken in 3.3.1
  config->SetCpuMathLibraryNumThreads(threads);
  config->DisableGlogInfo();
  auto predictor = paddle_infer::CreatePredictor(*config);
  auto input = predictor->GetInputHandle(predictor->GetInputNames().at(0));
  const auto once = [&] {
    input->Reshape(shape);
    input->CopyFromCpu(data.data());
    if (!predictor->Run()) std::exit(1);
  };
  print_timed_loop(once, warmup, runs);
  config->~AnalysisConfig();
  return 0;
}

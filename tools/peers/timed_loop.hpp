// The timing every C++ peer loop shares (mnn_timed_loop.cpp, executorch_timed_loop.cpp,
// paddle_timed_loop.cpp): `warmup` untimed calls of `once`, then `runs` timed ones on the steady
// clock, printed as one JSON line {"p50_ms", "mean_ms", "runs"} plus `extra` fields, which
// tools/peers/edge_fidelity.py reads.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

// The arguments the ExecuTorch and Paddle loops share: MODEL INPUT.raw N C H W THREADS WARMUP RUNS,
// the input read as float32 in NCHW order.
struct LoopArguments {
  const char* model = nullptr;
  std::vector<int> shape;
  int threads = 0, warmup = 0, runs = 0;
  std::vector<float> input;
};

// Prints the usage and exits 2 on a wrong argument count.
inline LoopArguments parse_loop_arguments(int argc, char** argv, const char* model_kind) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s %s INPUT.raw N C H W THREADS WARMUP RUNS\n", argv[0], model_kind);
    std::exit(2);
  }
  LoopArguments a;
  a.model = argv[1];
  a.shape = {std::stoi(argv[3]), std::stoi(argv[4]), std::stoi(argv[5]), std::stoi(argv[6])};
  a.threads = std::stoi(argv[7]);
  a.warmup = std::stoi(argv[8]);
  a.runs = std::stoi(argv[9]);
  a.input.resize(static_cast<std::size_t>(a.shape[0]) * a.shape[1] * a.shape[2] * a.shape[3]);
  std::ifstream(argv[2], std::ios::binary)
      .read(reinterpret_cast<char*>(a.input.data()), static_cast<std::streamsize>(a.input.size() * sizeof(float)));
  return a;
}

template <typename Once>
void print_timed_loop(Once once, int warmup, int runs, const std::string& extra = "") {
  for (int i = 0; i < warmup; ++i) once();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto started = std::chrono::steady_clock::now();
    once();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  }
  auto sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const auto n = sorted.size();
  const double p50 = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  std::printf("{\"p50_ms\": %.6f, \"mean_ms\": %.6f, \"runs\": %zu%s}\n", p50,
              std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(n), n, extra.c_str());
}

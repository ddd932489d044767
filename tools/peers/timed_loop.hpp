// The timing every C++ peer loop shares (mnn_timed_loop.cpp, executorch_timed_loop.cpp,
// paddle_timed_loop.cpp): `warmup` untimed calls of `once`, then `runs` timed ones on the steady
// clock, printed as one JSON line {"p50_ms", "mean_ms", "runs"} plus `extra` fields, which
// tools/peers/edge_fidelity.py reads.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

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

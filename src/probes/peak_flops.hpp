// Theoretical FP32 peak of a CPU (cores x clock x FLOPs per cycle), the denominator of "% of
// peak"; every figure says how it was derived, since clock and FMA units are assumptions.
#pragma once

#include <string>

namespace infermark::probes {

struct PeakFlops {
  double gflops = 0.0;
  std::string derivation;  // "2 physical cores x 2596 MHz x 64 FP32 FLOPs/cycle (avx512f: ...) = 332.3 GFLOP/s"
  std::string cpu_model;   // the CPU it was derived for; "" when the user gave the figure
};

// FP32 FLOPs per cycle and core from the SIMD flags ("avx2 avx512f fma ..."): avx512f 64 (16 lanes
// x 2 for the FMA x 2 units), avx2 + fma 32 (8 x 2 x 2), else 8 (SSE: a 4-wide add and a 4-wide
// multiply). `why` receives that reasoning.
int fp32_flops_per_cycle(const std::string& simd_flags, std::string& why);

PeakFlops peak_gflops(int physical_cores, double mhz, const std::string& simd_flags, const std::string& clock_source);

// The machine this process runs on: physical cores and SIMD flags as capture_environment() reads
// them; the clock from cpufreq's cpuinfo_max_freq, else the highest "cpu MHz" in /proc/cpuinfo.
// Throws infermark::Error when no clock can be read.
PeakFlops this_machine_peak_gflops();

}  // namespace infermark::probes

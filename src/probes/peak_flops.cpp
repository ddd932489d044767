#include "probes/peak_flops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "probes/environment.hpp"

namespace infermark::probes {
namespace {

std::set<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

struct Clock {
  double mhz = 0.0;
  std::string source;
};

Clock read_clock() {
  if (std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); max_freq) {
    double khz = 0;
    if (max_freq >> khz && khz > 0) return {khz / 1000.0, "cpufreq cpuinfo_max_freq of cpu0"};
  }
  // Without cpufreq (VMs, containers) the current clock is the best available; turbo may exceed it.
  Clock clock{0.0, "highest \"cpu MHz\" in /proc/cpuinfo (no cpufreq; current, not maximum, clock)"};
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("cpu MHz"))
      if (const auto colon = line.find(':'); colon != std::string::npos)
        clock.mhz = std::max(clock.mhz, std::stod(line.substr(colon + 1)));
  if (clock.mhz <= 0)
    throw Error("cannot read this machine's CPU clock (no cpufreq, no \"cpu MHz\" in /proc/cpuinfo); give --peak-gflops");
  return clock;
}

}  // namespace

int fp32_flops_per_cycle(const std::string& simd_flags, std::string& why) {
  const auto flags = words(simd_flags);
  if (flags.contains("avx512f")) {
    why = "avx512f: 16 FP32 lanes x 2 (FMA) x 2 FMA units; CPUs with one AVX-512 FMA unit reach half";
    return 64;
  }
  if (flags.contains("avx2") && flags.contains("fma")) {
    why = "avx2+fma: 8 FP32 lanes x 2 (FMA) x 2 FMA units";
    return 32;
  }
  why = "no AVX2/FMA: SSE, a 4-wide add and a 4-wide multiply per cycle";
  return 8;
}

PeakFlops peak_gflops(int physical_cores, double mhz, const std::string& simd_flags, const std::string& clock_source) {
  std::string why;
  const int per_cycle = fp32_flops_per_cycle(simd_flags, why);
  const double gflops = physical_cores * mhz * per_cycle / 1000.0;
  return {gflops,
          fmt::format("{} physical cores x {:.0f} MHz ({}) x {} FP32 FLOPs/cycle ({}) = {:.1f} GFLOP/s", physical_cores, mhz,
                      clock_source, per_cycle, why, gflops),
          ""};
}

PeakFlops this_machine_peak_gflops() {
  const auto env = capture_environment();
  const auto clock = read_clock();
  auto peak = peak_gflops(env.physical_cores, clock.mhz, env.cpu_flags_simd, clock.source);
  peak.cpu_model = env.cpu_model;
  return peak;
}

}  // namespace infermark::probes

// Captures the machine a measurement ran on, so results from different machines are never
// compared blindly: CPU, cores, caches, frequency governor, memory, kernel, compiler.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace infermark::probes {

struct Environment {
  std::string cpu_model;   // /proc/cpuinfo "model name"
  std::string cpu_vendor;  // "vendor_id"
  int logical_cores = 0;   // online logical CPUs
  int physical_cores = 0;  // distinct (physical id, core id) pairs
  int sockets = 0;
  std::string cpu_flags_simd;                 // the SIMD-relevant flags only (avx2, avx512f, avx512_bf16, amx_*)
  std::map<std::string, std::string> caches;  // "L1d" -> "64 KiB" ... from /sys cache index
  std::string governor;                       // scaling_governor of cpu0, or "unavailable"
  std::string turbo;                          // "on", "off" or "unavailable" (intel_pstate no_turbo / cpufreq boost)
  std::string hypervisor;                     // "KVM" ..., or "none" when the hypervisor flag is absent
  long long memory_total_mb = 0;              // MemTotal
  long long memory_available_mb = 0;
  std::string kernel;  // uname -sr
  std::string os;      // PRETTY_NAME from /etc/os-release
  std::string hostname;
  std::string compiler;                          // compiler that built infermark, e.g. "GCC 12.2.0"
  std::string build_type;                        // CMAKE_BUILD_TYPE passed as a define, or "unknown"
  std::map<std::string, std::string> libraries;  // filled by the caller (framework versions)
};

// Reads everything above from /proc, /sys and uname. Never throws: a value that cannot be read
// is "unavailable" (strings) or 0 (numbers).
Environment capture_environment();

nlohmann::json to_json(const Environment& env);

}  // namespace infermark::probes

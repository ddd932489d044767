// An NVIDIA GPU through NVML, loaded at run time so the build needs no CUDA: its memory, power and
// total-energy counter. Unavailable, with the reason, where there is no driver or no such GPU.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "probes/energy_counter.hpp"

namespace infermark::probes {

struct GpuReading {
  bool available = false;
  std::string reason;  // why unavailable ("no NVIDIA driver (libnvidia-ml.so.1 not found)")
  double peak_memory_mb = 0.0;
  double mean_power_w = 0.0;
};

class NvmlGpu {
 public:
  explicit NvmlGpu(unsigned index = 0);
  ~NvmlGpu();
  NvmlGpu(const NvmlGpu&) = delete;
  NvmlGpu& operator=(const NvmlGpu&) = delete;

  void start();   // opens the device once; later calls only reset the per-span figures
  void sample();  // memory used and power drawn now
  GpuReading reading() const;
  // The device's total-energy counter in millijoules, or nullopt with `why_not` said.
  std::optional<unsigned long long> energy_mj(std::string& why_not) const;
  std::string name() const;  // "gpu0"

 private:
  struct Device;
  std::unique_ptr<Device> device_;
};

// The energy counter of NVIDIA GPU `index`: the energy of a cell that ran on that GPU.
std::unique_ptr<EnergyCounter> open_nvml_energy(unsigned index);

}  // namespace infermark::probes

// Which counter a cell's energy is read from: the one of the device it ran on (RAPL for the CPU,
// NVML for an NVIDIA GPU). Where that counter cannot be read the energy is unavailable, with the
// reason: another device's counter never stands in for it.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "probes/energy_counter.hpp"
#include "probes/rapl.hpp"

namespace infermark::probes {

enum class EnergyDevice { kCpu, kNvidiaGpu, kWithoutCounter };

struct EnergyTarget {
  EnergyDevice device = EnergyDevice::kCpu;
  std::string device_name = "cpu";                      // as the cell named it, for messages
  unsigned gpu_index = 0;                               // kNvidiaGpu: NVML's device index
  std::filesystem::path powercap_root = kPowercapRoot;  // kCpu: where RAPL is read (tests: a fake tree)
  // kNvidiaGpu: opens GPU `index`'s counter; empty means NVML (tests plant a fake).
  std::function<std::unique_ptr<EnergyCounter>(unsigned index)> open_gpu_counter;
};

// "cpu" -> the CPU; "cuda", "cuda:1", "gpu", "GPU.1" -> that NVIDIA GPU; any other device has no
// counter here (its energy is unavailable, saying so).
EnergyTarget energy_target_for_device(const std::string& device);

// "cpu", "gpu1", or the device's own name: what a result's energy figure is for.
std::string device_label(const EnergyTarget& target);

// The counter of the target's device, and of no other.
std::unique_ptr<EnergyCounter> open_energy_counter(const EnergyTarget& target);

}  // namespace infermark::probes

#include "probes/energy_target.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

#include "probes/nvml.hpp"

namespace infermark::probes {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "cuda", "cuda:N", "gpu", "gpu:N", "gpu.N" (OpenVINO's spelling) -> N (0 when absent).
std::optional<unsigned> nvidia_index(std::string_view device) {
  for (const std::string_view prefix : {"cuda", "gpu"}) {
    if (!device.starts_with(prefix)) continue;
    auto rest = device.substr(prefix.size());
    if (rest.empty()) return 0u;
    if (rest.front() != ':' && rest.front() != '.') return std::nullopt;
    rest.remove_prefix(1);
    unsigned index = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (error != std::errc() || rest.empty() || end != rest.data() + rest.size()) return std::nullopt;
    return index;
  }
  return std::nullopt;
}

// A device with no counter here: its energy is unavailable, and says which device.
class NoEnergyCounter final : public EnergyCounter {
 public:
  explicit NoEnergyCounter(std::string device) : device_(std::move(device)) {}
  void start() override {}
  void update() override {}
  bool available() const override { return false; }
  std::string source() const override {
    return "no energy counter for device '" + device_ + "' here (RAPL reads the CPU, NVML NVIDIA GPUs)";
  }
  double joules() const override { return 0.0; }

 private:
  std::string device_;
};

}  // namespace

EnergyTarget energy_target_for_device(const std::string& device) {
  EnergyTarget target;
  target.device_name = device;
  const std::string name = lower(device);
  if (name == "cpu") return target;
  if (const auto index = nvidia_index(name)) {
    target.device = EnergyDevice::kNvidiaGpu;
    target.gpu_index = *index;
  } else {
    target.device = EnergyDevice::kWithoutCounter;
  }
  return target;
}

std::string device_label(const EnergyTarget& target) {
  switch (target.device) {
    case EnergyDevice::kCpu:
      return "cpu";
    case EnergyDevice::kNvidiaGpu:
      return "gpu" + std::to_string(target.gpu_index);
    case EnergyDevice::kWithoutCounter:
      break;
  }
  return target.device_name;
}

std::unique_ptr<EnergyCounter> open_energy_counter(const EnergyTarget& target) {
  switch (target.device) {
    case EnergyDevice::kCpu:
      return std::make_unique<RaplMeter>(target.powercap_root);
    case EnergyDevice::kNvidiaGpu:
      return target.open_gpu_counter ? target.open_gpu_counter(target.gpu_index) : open_nvml_energy(target.gpu_index);
    case EnergyDevice::kWithoutCounter:
      break;
  }
  return std::make_unique<NoEnergyCounter>(target.device_name);
}

}  // namespace infermark::probes

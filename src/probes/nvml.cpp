#include "probes/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace infermark::probes {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
constexpr double kBytesPerMib = 1024.0 * 1024.0;
constexpr double kMilli = 1e-3;
const char* const kNvmlLibrary = "libnvidia-ml.so.1";

// The few NVML ABI pieces used here, declared locally instead of including nvml.h.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*device_count)(unsigned int*) = nullptr;
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*memory_info)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;         // milliwatts
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;  // millijoules
};

template <typename Function>
bool load_symbol(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// Returns the name of the first missing symbol, or nullptr when all were found.
const char* load_nvml_api(void* library, NvmlApi& api) {
  if (!load_symbol(library, "nvmlInit_v2", api.init)) return "nvmlInit_v2";
  if (!load_symbol(library, "nvmlShutdown", api.shutdown)) return "nvmlShutdown";
  if (!load_symbol(library, "nvmlErrorString", api.error_string)) return "nvmlErrorString";
  if (!load_symbol(library, "nvmlDeviceGetCount_v2", api.device_count)) {
    return "nvmlDeviceGetCount_v2";
  }
  if (!load_symbol(library, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index)) {
    return "nvmlDeviceGetHandleByIndex_v2";
  }
  if (!load_symbol(library, "nvmlDeviceGetMemoryInfo", api.memory_info)) {
    return "nvmlDeviceGetMemoryInfo";
  }
  if (!load_symbol(library, "nvmlDeviceGetPowerUsage", api.power_usage)) {
    return "nvmlDeviceGetPowerUsage";
  }
  // Energy is Volta and newer; older drivers may lack the symbol, which only costs energy.
  load_symbol(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
  return nullptr;
}

}  // namespace

struct NvmlGpu::Device {
  explicit Device(unsigned gpu_index) : index(gpu_index) {}
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (initialised) api.shutdown();
    if (library != nullptr) ::dlclose(library);
  }

  void open() {
    library = ::dlopen(kNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      reason = "no NVIDIA driver (" + std::string(kNvmlLibrary) + " not found)";
      return;
    }
    if (const char* missing = load_nvml_api(library, api)) {
      reason = std::string(kNvmlLibrary) + " lacks " + missing;
      return;
    }
    if (const NvmlReturn status = api.init(); status != kNvmlSuccess) {
      reason = "nvmlInit failed: " + nvml_error(status);
      return;
    }
    initialised = true;
    unsigned int count = 0;
    const NvmlReturn status = api.device_count(&count);
    if (status == kNvmlSuccess && index < count && api.device_by_index(index, &handle) == kNvmlSuccess) return;
    reason = status != kNvmlSuccess ? "nvmlDeviceGetCount failed: " + nvml_error(status)
             : count == 0           ? "NVML reports no GPUs"
                                    : "NVML could not open gpu" + std::to_string(index);
    api.shutdown();
    initialised = false;
  }

  std::string nvml_error(NvmlReturn status) const {
    const char* text = api.error_string(status);
    return text != nullptr ? text : "error " + std::to_string(status);
  }

  unsigned index;
  bool attempted = false;
  bool initialised = false;
  void* library = nullptr;
  NvmlApi api;
  NvmlDevice handle = nullptr;
  std::string reason;
  double peak_memory_mb = kUnknown;
  double power_sum_w = 0.0;
  int power_count = 0;
};

NvmlGpu::NvmlGpu(unsigned index) : device_(std::make_unique<Device>(index)) {}
NvmlGpu::~NvmlGpu() = default;

void NvmlGpu::start() {
  Device& d = *device_;
  if (!d.attempted) {
    d.attempted = true;
    d.open();
  }
  d.peak_memory_mb = kUnknown;
  d.power_sum_w = 0.0;
  d.power_count = 0;
}

void NvmlGpu::sample() {
  Device& d = *device_;
  if (!d.initialised) return;
  NvmlMemory memory{};
  if (d.api.memory_info(d.handle, &memory) == kNvmlSuccess) {
    const double used_mb = static_cast<double>(memory.used) / kBytesPerMib;
    d.peak_memory_mb = std::isnan(d.peak_memory_mb) ? used_mb : std::max(d.peak_memory_mb, used_mb);
  }
  unsigned int milliwatts = 0;
  if (d.api.power_usage(d.handle, &milliwatts) == kNvmlSuccess) {
    d.power_sum_w += milliwatts * kMilli;
    ++d.power_count;
  }
}

GpuReading NvmlGpu::reading() const {
  const Device& d = *device_;
  return {d.initialised, d.reason, d.initialised ? d.peak_memory_mb : kUnknown,
          d.power_count > 0 ? d.power_sum_w / d.power_count : kUnknown};
}

std::optional<unsigned long long> NvmlGpu::energy_mj(std::string& why_not) const {
  const Device& d = *device_;
  unsigned long long millijoules = 0;
  if (!d.initialised) {
    why_not = d.attempted ? d.reason : "NVML not opened";
  } else if (d.api.total_energy == nullptr) {
    why_not = std::string(kNvmlLibrary) + " lacks nvmlDeviceGetTotalEnergyConsumption (driver too old)";
  } else if (d.api.total_energy(d.handle, &millijoules) != kNvmlSuccess) {
    why_not = "NVML energy counter not supported on " + name();
  } else {
    return millijoules;
  }
  return std::nullopt;
}

std::string NvmlGpu::name() const { return "gpu" + std::to_string(device_->index); }

namespace {

// NVML's total-energy counter (Volta and newer) since start(); 64-bit millijoules never wrap.
class NvmlEnergy final : public EnergyCounter {
 public:
  explicit NvmlEnergy(unsigned index) : gpu_(index) {}

  void start() override {
    gpu_.start();
    why_not_.clear();
    baseline_mj_ = last_mj_ = gpu_.energy_mj(why_not_);
  }
  void update() override {
    if (!baseline_mj_ || !why_not_.empty()) return;
    // A failed read only delays the count, as with RAPL; a counter that goes back makes it unknown.
    std::string failed;
    const auto now = gpu_.energy_mj(failed);
    if (!now) return;
    if (*now < *last_mj_)
      why_not_ = "NVML energy counter of " + gpu_.name() + " went back: the span's energy is unknown";
    else
      last_mj_ = now;
  }
  bool available() const override { return baseline_mj_.has_value() && why_not_.empty(); }
  std::string source() const override { return available() ? "nvml:" + gpu_.name() : "NVML unreadable: " + why_not_; }
  double joules() const override { return baseline_mj_ ? static_cast<double>(*last_mj_ - *baseline_mj_) * kMilli : 0.0; }

 private:
  NvmlGpu gpu_;
  std::optional<unsigned long long> baseline_mj_, last_mj_;
  std::string why_not_;
};

}  // namespace

std::unique_ptr<EnergyCounter> open_nvml_energy(unsigned index) { return std::make_unique<NvmlEnergy>(index); }

}  // namespace infermark::probes

#include "probes/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

// Two levels so that the macro is expanded before it is turned into a string.
#define INFERMARK_STRINGIFY_IMPL(x) #x
#define INFERMARK_STRINGIFY(x) INFERMARK_STRINGIFY_IMPL(x)

namespace infermark::probes {
namespace {

constexpr const char* kUnavailable = "unavailable";
constexpr std::string_view kWhitespace = " \t\r\n";
const std::string kCpuSysfs = "/sys/devices/system/cpu/";

// ---- Text helpers -------------------------------------------------------------------------

// Trims whitespace and replaces bytes outside printable ASCII: nlohmann::json refuses to dump
// invalid UTF-8, and a stray byte in /proc must not break the report later.
std::string clean(std::string_view text) {
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kWhitespace);
  std::string result(text.substr(first, last - first + 1));
  for (char& c : result) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) c = '?';
  }
  return result;
}

std::string unquote(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  return std::string(text);
}

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  return clean(line);
}

// Calls on_field(key, value) for every "key<separator>value" line of a text file.
template <typename OnField>
void for_each_field(const std::string& path, char separator, OnField on_field) {
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    const auto at = line.find(separator);
    if (at == std::string::npos) continue;
    const std::string_view view(line);
    on_field(clean(view.substr(0, at)), clean(view.substr(at + 1)));
  }
}

// Keeps the first value seen: /proc/cpuinfo repeats every field once per logical CPU.
void set_once(std::optional<std::string>& field, const std::string& value) {
  if (!field) field = value;
}

// ---- CPU ----------------------------------------------------------------------------------

struct CpuInfo {
  std::optional<std::string> model;
  std::optional<std::string> vendor;
  std::optional<std::string> flags;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::set<std::string> sockets;                        // physical id
};

CpuInfo read_cpuinfo() {
  CpuInfo info;
  std::string physical_id;  // "physical id" precedes "core id" within each processor block
  for_each_field("/proc/cpuinfo", ':', [&](const std::string& key, const std::string& value) {
    if (key == "processor") {
      physical_id.clear();
    } else if (key == "model name") {
      set_once(info.model, value);
    } else if (key == "vendor_id") {
      set_once(info.vendor, value);
    } else if (key == "flags" || key == "Features") {  // "Features" on Arm
      set_once(info.flags, value);
    } else if (key == "physical id") {
      physical_id = value;
      info.sockets.insert(value);
    } else if (key == "core id") {
      info.cores.emplace(physical_id, value);
    }
  });
  return info;
}

std::set<std::string> split_words(const std::string& text) {
  std::istringstream words(text);
  return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
}

// Flags that decide which inference kernels a framework can pick.
bool is_simd_flag(std::string_view flag) {
  for (std::string_view prefix : {"avx", "amx", "sse4_", "asimd", "sve"}) {
    if (flag.starts_with(prefix)) return true;
  }
  return flag == "fma" || flag == "f16c" || flag == "bf16" || flag == "i8mm";
}

std::string simd_flags(const std::set<std::string>& flags) {
  std::string joined;
  for (const auto& flag : flags) {
    if (!is_simd_flag(flag)) continue;
    if (!joined.empty()) joined += ' ';
    joined += flag;
  }
  return joined;
}

// Hypervisors publish a 12-byte vendor signature in CPUID leaf 0x40000000.
std::string hypervisor_vendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(0x40000000, eax, ebx, ecx, edx);
  std::array<char, 13> raw{};
  std::memcpy(raw.data(), &ebx, 4);
  std::memcpy(raw.data() + 4, &ecx, 4);
  std::memcpy(raw.data() + 8, &edx, 4);
  const std::string signature = clean(raw.data());  // stops at the padding NULs of "KVMKVMKVM"
  static const std::array<std::pair<std::string_view, const char*>, 5> kKnown = {{
      {"KVMKVMKVM", "KVM"},
      {"Microsoft Hv", "Hyper-V"},
      {"VMwareVMware", "VMware"},
      {"XenVMMXenVMM", "Xen"},
      {"TCGTCGTCGTCG", "QEMU"},
  }};
  for (const auto& [known_signature, name] : kKnown) {
    if (signature == known_signature) return name;
  }
  if (!signature.empty()) return signature;
#endif
  return "unknown";
}

// ---- Caches and frequency -----------------------------------------------------------------

// The names lscpu uses: "L1d", "L1i", "L2", "L3".
std::string cache_name(const std::string& level, const std::string& type) {
  if (type == "Data") return "L" + level + "d";
  if (type == "Instruction") return "L" + level + "i";
  return "L" + level;
}

// sysfs writes "48K" or "32768K"; report "48 KiB" and "32 MiB".
std::string readable_size(const std::string& sysfs_size) {
  static constexpr std::array<std::string_view, 4> kSuffixes = {"", "K", "M", "G"};
  static constexpr std::array<const char*, 4> kUnits = {"B", "KiB", "MiB", "GiB"};
  char* suffix_start = nullptr;
  long long value = std::strtoll(sysfs_size.c_str(), &suffix_start, 10);
  std::size_t unit = 0;
  while (unit < kSuffixes.size() && kSuffixes[unit] != suffix_start) ++unit;
  if (unit == kSuffixes.size()) return sysfs_size;  // unknown format: keep it verbatim
  for (; unit + 1 < kUnits.size() && value >= 1024 && value % 1024 == 0; ++unit) value /= 1024;
  return std::to_string(value) + " " + kUnits[unit];
}

std::map<std::string, std::string> read_caches() {
  std::map<std::string, std::string> caches;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kCpuSysfs + "cpu0/cache", error)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    const auto level = read_first_line(entry.path() / "level");
    const auto type = read_first_line(entry.path() / "type");
    const auto size = read_first_line(entry.path() / "size");
    if (level && type && size) caches[cache_name(*level, *type)] = readable_size(*size);
  }
  return caches;
}

std::string turbo_state() {
  // The two drivers state it with opposite polarity.
  if (const auto no_turbo = read_first_line(kCpuSysfs + "intel_pstate/no_turbo")) {
    return *no_turbo == "1" ? "off" : "on";
  }
  if (const auto boost = read_first_line(kCpuSysfs + "cpufreq/boost")) {
    return *boost == "1" ? "on" : "off";
  }
  return kUnavailable;
}

// ---- Memory, OS, toolchain ----------------------------------------------------------------

long long kib_to_mib(const std::string& kib_text) { return std::strtoll(kib_text.c_str(), nullptr, 10) / 1024; }

void read_meminfo(Environment& env) {
  for_each_field("/proc/meminfo", ':', [&](const std::string& key, const std::string& value) {
    if (key == "MemTotal") env.memory_total_mb = kib_to_mib(value);
    if (key == "MemAvailable") env.memory_available_mb = kib_to_mib(value);
  });
}

std::string kernel_name() {
  utsname names{};
  if (::uname(&names) != 0) return kUnavailable;
  return clean(std::string(names.sysname) + " " + names.release);
}

std::string os_pretty_name() {
  // /usr/lib/os-release is the documented fallback when /etc/os-release is absent.
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    std::string name;
    for_each_field(path, '=', [&](const std::string& key, const std::string& value) {
      if (key == "PRETTY_NAME") name = unquote(value);
    });
    if (!name.empty()) return name;
  }
  return kUnavailable;
}

std::string host_name() {
  std::array<char, 256> name{};  // zero-filled: gethostname may not terminate a truncated name
  if (::gethostname(name.data(), name.size() - 1) != 0) return kUnavailable;
  return clean(name.data());
}

std::string version_string(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string compiler_name() {
  // Clang also defines __GNUC__, so it is tested first.
#if defined(__clang__)
  return "Clang " + version_string(__clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return "GCC " + version_string(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#elif defined(__VERSION__)
  return __VERSION__;
#else
  return "unknown";
#endif
}

std::string build_type() {
#ifdef INFERMARK_BUILD_TYPE
  // Stringified and unquoted, so both -DINFERMARK_BUILD_TYPE=Release and ="Release" work.
  const std::string type = unquote(INFERMARK_STRINGIFY(INFERMARK_BUILD_TYPE));
  if (!type.empty()) return type;
#endif
  return "unknown";
}

// ---- Assembly -----------------------------------------------------------------------------

void fill_cpu(Environment& env) {
  const CpuInfo cpu = read_cpuinfo();
  env.cpu_model = cpu.model.value_or(kUnavailable);
  env.cpu_vendor = cpu.vendor.value_or(kUnavailable);
  env.logical_cores = static_cast<int>(std::max(0L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  // Without topology fields (containers, some Arm kernels) every logical CPU counts as a core.
  env.physical_cores = cpu.cores.empty() ? env.logical_cores : static_cast<int>(cpu.cores.size());
  env.sockets = static_cast<int>(cpu.sockets.size());
  const auto flags = split_words(cpu.flags.value_or(""));
  env.cpu_flags_simd = cpu.flags ? simd_flags(flags) : kUnavailable;
  env.hypervisor = flags.contains("hypervisor") ? hypervisor_vendor() : "none";
}

void fill_platform(Environment& env) {
  env.caches = read_caches();
  env.governor = read_first_line(kCpuSysfs + "cpu0/cpufreq/scaling_governor").value_or(kUnavailable);
  env.turbo = turbo_state();
  read_meminfo(env);
  env.kernel = kernel_name();
  env.os = os_pretty_name();
  env.hostname = host_name();
  env.compiler = compiler_name();
  env.build_type = build_type();
}

}  // namespace

Environment capture_environment() {
  Environment env;
  try {
    fill_cpu(env);
    fill_platform(env);
  } catch (...) {
    // Only allocation or filesystem iteration can fail here; keep whatever was read.
  }
  return env;
}

nlohmann::json to_json(const Environment& env) {
  try {
    return {
        {"cpu_model", env.cpu_model},
        {"cpu_vendor", env.cpu_vendor},
        {"logical_cores", env.logical_cores},
        {"physical_cores", env.physical_cores},
        {"sockets", env.sockets},
        {"cpu_flags_simd", env.cpu_flags_simd},
        {"caches", env.caches},
        {"governor", env.governor},
        {"turbo", env.turbo},
        {"hypervisor", env.hypervisor},
        {"memory_total_mb", env.memory_total_mb},
        {"memory_available_mb", env.memory_available_mb},
        {"kernel", env.kernel},
        {"os", env.os},
        {"hostname", env.hostname},
        {"compiler", env.compiler},
        {"build_type", env.build_type},
        {"libraries", env.libraries},
    };
  } catch (...) {
    return nlohmann::json::object();  // out of memory: an empty record beats a crashed run
  }
}

}  // namespace infermark::probes

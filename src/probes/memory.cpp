#include "probes/memory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace infermark::probes {
namespace {

constexpr double kKibPerMib = 1024.0;

// Value of a "Key:   1234 kB" line, or 0 when the key is missing.
double kib_field(const std::string& status, const std::string& key) {
  const auto at = status.find("\n" + key + ":");
  if (at == std::string::npos) return 0.0;
  // strtod skips the padding and yields 0 for anything unparsable.
  return std::strtod(status.c_str() + at + key.size() + 2, nullptr);
}

std::string read_status(const std::string& path) {
  std::ifstream file(path);
  // Leading newline so every key, the first one included, is found as "\nKey:".
  std::string text = "\n";
  for (std::string line; std::getline(file, line);) text += line + "\n";
  return text;
}

}  // namespace

MemoryReading read_process_memory() {
  const std::string status = read_status("/proc/self/status");
  return {kib_field(status, "VmRSS") / kKibPerMib, kib_field(status, "VmHWM") / kKibPerMib};
}

double process_rss_mb(int pid) {
  return kib_field(read_status("/proc/" + std::to_string(pid) + "/status"), "VmRSS") / kKibPerMib;
}

bool reset_peak_rss() {
  // POSIX write rather than a stream: the kernel's verdict comes back from write(2) itself.
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = ::write(fd, "5", 1) == 1;
  return ::close(fd) == 0 && written;
}

}  // namespace infermark::probes

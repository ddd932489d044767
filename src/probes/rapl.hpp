// CPU energy from RAPL through the Linux powercap tree (/sys/class/powercap): which zones to sum so
// nothing is counted twice, and counters unwrapped between reads. The root is a parameter so the
// reader can be tested on a directory tree shaped like sysfs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "probes/energy_counter.hpp"

namespace infermark::probes {

inline const std::filesystem::path kPowercapRoot = "/sys/class/powercap";

// One counter that is summed: a package ("intel-rapl:0", name "package-0"), a DRAM sub-domain
// (outside the package counter), or an MMIO package zone for a package the MSR zones lack.
struct RaplZone {
  std::string id;     // directory name: "intel-rapl:0", "intel-rapl:0:2", "intel-rapl-mmio:0"
  std::string label;  // as the source text names it: "package-0", "package-0/dram", "mmio:package-0"
  std::filesystem::path dir;
};

// The zones to sum, in id order. Core and uncore sub-domains are inside their package's counter
// and "psys" covers the whole platform, packages included, so neither is summed with them.
std::vector<RaplZone> find_rapl_zones(const std::filesystem::path& powercap_root = kPowercapRoot);

// The CPU's joules over a span, read at start() and at each update(); every zone is read often
// enough by the sampler (every 0.1 s) that a counter wraps at most once between two reads.
class RaplMeter final : public EnergyCounter {
 public:
  explicit RaplMeter(std::filesystem::path powercap_root = kPowercapRoot) : root_(std::move(powercap_root)) {}

  void start() override;   // discovers the zones and takes their baselines
  void update() override;  // adds what each zone used since its last read

  // True when every summed zone was read over the whole span.
  bool available() const override { return !zones_.empty() && lost_.empty(); }
  // "rapl:package-0+rapl:package-1" (with the zones left out, if any), or why energy is unknown
  // ("RAPL unreadable: <path>: <cause>").
  std::string source() const override;
  double joules() const override;

 private:
  struct Counter {
    RaplZone zone;
    std::uint64_t max_range_uj = 0;  // 0 when max_energy_range_uj was unreadable
    std::uint64_t last_uj = 0;
    std::uint64_t accumulated_uj = 0;
  };

  std::filesystem::path root_;
  std::vector<Counter> zones_;
  std::string skipped_;   // zones found but unreadable at start, and why
  std::string lost_;      // why the span's total became unknown (a wrap that cannot be undone)
  std::string no_zones_;  // why no zone could be read at all
};

}  // namespace infermark::probes

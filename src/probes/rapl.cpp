#include "probes/rapl.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <tuple>

namespace infermark::probes {
namespace {

constexpr double kJoulesPerMicrojoule = 1e-6;
constexpr std::string_view kMsrPrefix = "intel-rapl:";
constexpr std::string_view kMmioPrefix = "intel-rapl-mmio:";

// A sysfs number, or why it could not be had: the reason ends up in the result file.
struct CounterRead {
  std::optional<std::uint64_t> value;
  std::string why_not;
};

std::string trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\n");
  if (begin == std::string_view::npos) return "";
  return std::string(text.substr(begin, text.find_last_not_of(" \t\n") - begin + 1));
}

// open/read rather than iostreams: the errno says why (a directory, a dangling link, EACCES).
std::optional<std::string> read_small_file(const std::filesystem::path& path, std::string& why_not) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why_not = errno == EACCES || errno == EPERM ? "permission denied" : std::strerror(errno);
    return std::nullopt;
  }
  char buffer[256];
  const ssize_t size = ::read(fd, buffer, sizeof buffer);
  const int error = errno;
  ::close(fd);
  if (size < 0) {
    why_not = std::strerror(error);
    return std::nullopt;
  }
  return std::string(buffer, static_cast<std::size_t>(size));
}

// The whole text must be one decimal number: "12abc" is as unusable as "abc".
std::optional<std::uint64_t> parse_counter(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || text.empty() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

CounterRead read_counter(const std::filesystem::path& path) {
  CounterRead read;
  const auto text = read_small_file(path, read.why_not);
  if (!text) return read;
  const std::string number = trimmed(*text);
  read.value = parse_counter(number);
  if (!read.value) read.why_not = "not a number ('" + number.substr(0, 40) + "')";
  return read;
}

std::string zone_name(const std::filesystem::path& dir, const std::string& fallback) {
  std::string ignored;
  const auto text = read_small_file(dir / "name", ignored);
  const std::string name = text ? trimmed(*text) : "";
  return name.empty() ? fallback : name;
}

// "intel-rapl:0" -> (msr, 0, none); "intel-rapl:0:2" -> (msr, 0, 2); "intel-rapl-mmio:0" -> (mmio, 0, none).
struct ZoneId {
  bool mmio = false;
  unsigned package = 0;
  std::optional<unsigned> sub;
  auto order() const { return std::make_tuple(mmio, package, sub.value_or(0), sub.has_value()); }
};

std::optional<unsigned> parse_index(std::string_view digits) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || digits.empty() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<ZoneId> parse_zone_id(std::string_view entry) {
  ZoneId id;
  if (entry.starts_with(kMmioPrefix)) {
    id.mmio = true;
    entry.remove_prefix(kMmioPrefix.size());
  } else if (entry.starts_with(kMsrPrefix)) {
    entry.remove_prefix(kMsrPrefix.size());
  } else {
    return std::nullopt;
  }
  const auto colon = entry.find(':');
  const auto package = parse_index(entry.substr(0, colon));
  if (!package) return std::nullopt;
  id.package = *package;
  if (colon == std::string_view::npos) return id;
  id.sub = parse_index(entry.substr(colon + 1));
  if (!id.sub) return std::nullopt;
  return id;
}

struct FoundZone {
  ZoneId id;
  std::string entry, name;
  std::filesystem::path dir;
};

std::vector<FoundZone> list_zones(const std::filesystem::path& root) {
  std::vector<FoundZone> found;
  std::error_code error;
  for (std::filesystem::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    const std::string entry = it->path().filename().string();
    if (const auto id = parse_zone_id(entry)) found.push_back({*id, entry, zone_name(it->path(), entry), it->path()});
  }
  std::sort(found.begin(), found.end(), [](const FoundZone& a, const FoundZone& b) { return a.id.order() < b.id.order(); });
  return found;
}

}  // namespace

std::vector<RaplZone> find_rapl_zones(const std::filesystem::path& powercap_root) {
  const auto found = list_zones(powercap_root);
  const auto is_package = [](const FoundZone& z) { return !z.id.mmio && !z.id.sub; };
  const bool has_non_psys_package =
      std::any_of(found.begin(), found.end(), [&](const FoundZone& z) { return is_package(z) && z.name != "psys"; });
  std::vector<RaplZone> zones;
  std::set<std::string> package_names;
  std::set<unsigned> summed_packages;
  for (const auto& z : found) {
    if (!is_package(z) || (z.name == "psys" && has_non_psys_package)) continue;
    zones.push_back({z.entry, z.name, z.dir});
    package_names.insert(z.name);
    summed_packages.insert(z.id.package);
  }
  for (const auto& z : found) {
    // DRAM has its own counter outside the package's; core ("pp0") and uncore ("pp1") are inside it.
    if (!z.id.mmio && z.id.sub && z.name == "dram" && summed_packages.count(z.id.package)) {
      const auto parent = std::find_if(found.begin(), found.end(),
                                       [&](const FoundZone& p) { return is_package(p) && p.id.package == z.id.package; });
      zones.push_back({z.entry, parent->name + "/dram", z.dir});
    }
    // The MMIO interface reads the same package counter as the MSR one: only a package the MSR
    // zones lack is summed from it.
    if (z.id.mmio && !z.id.sub && !package_names.count(z.name)) zones.push_back({z.entry, "mmio:" + z.name, z.dir});
  }
  return zones;
}

void RaplMeter::start() {
  zones_.clear();
  skipped_.clear();
  lost_.clear();
  no_zones_.clear();
  const auto zones = find_rapl_zones(root_);
  std::error_code error;
  if (zones.empty()) {
    no_zones_ = "RAPL unreadable: " + root_.string() +
                (std::filesystem::is_directory(root_, error) ? ": no intel-rapl zones" : ": does not exist (no powercap driver)");
    return;
  }
  for (const RaplZone& zone : zones) {
    const CounterRead energy = read_counter(zone.dir / "energy_uj");
    if (!energy.value) {
      const std::string file = zone.id + "/energy_uj";
      skipped_ += (skipped_.empty() ? "" : ", ") + file + ": " + energy.why_not;
      if (no_zones_.empty()) no_zones_ = "RAPL unreadable: " + (root_ / file).string() + ": " + energy.why_not;
      continue;
    }
    // Without the range a wrap cannot be undone; update() then gives up rather than guess.
    const CounterRead range = read_counter(zone.dir / "max_energy_range_uj");
    zones_.push_back({zone, range.value.value_or(0), *energy.value, 0});
  }
}

void RaplMeter::update() {
  if (!lost_.empty()) return;
  for (Counter& counter : zones_) {
    // A failed read only delays the count: the next read adds everything since the last one.
    const auto now = read_counter(counter.zone.dir / "energy_uj").value;
    if (!now) continue;
    if (*now >= counter.last_uj) {
      counter.accumulated_uj += *now - counter.last_uj;
    } else if (counter.max_range_uj > counter.last_uj) {
      counter.accumulated_uj += counter.max_range_uj - counter.last_uj + *now;
    } else {
      lost_ = "RAPL counter " + counter.zone.id + " went back from " + std::to_string(counter.last_uj) + " to " +
              std::to_string(*now) + " uJ and its max_energy_range_uj is unreadable: the span's energy is unknown";
      return;
    }
    counter.last_uj = *now;
  }
}

std::string RaplMeter::source() const {
  if (zones_.empty()) return no_zones_;
  if (!lost_.empty()) return lost_;
  std::string names;
  for (const Counter& counter : zones_) names += (names.empty() ? "rapl:" : "+rapl:") + counter.zone.label;
  return skipped_.empty() ? names : names + " (left out, unreadable: " + skipped_ + ")";
}

double RaplMeter::joules() const {
  std::uint64_t total_uj = 0;
  for (const Counter& counter : zones_) total_uj += counter.accumulated_uj;
  return static_cast<double>(total_uj) * kJoulesPerMicrojoule;
}

}  // namespace infermark::probes

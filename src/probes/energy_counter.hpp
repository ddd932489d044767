// A cumulative energy counter (RAPL's zones, NVML's total energy) and the joules it counted within
// the measured windows only: a cell's warm-up and capacity probes use energy too, but its
// inference count covers only its measured phases, so only those spans may be counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infermark::probes {

// One device's counter, read at start() and at each update(); the sampler reads it every period.
class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  virtual void start() = 0;   // discovers the counter and takes its baseline
  virtual void update() = 0;  // adds what was used since the last read
  // True when the counter was read over the whole span.
  virtual bool available() const = 0;
  // What was read ("rapl:package-0+rapl:package-1", "nvml:gpu0"), or why the energy is unknown.
  virtual std::string source() const = 0;
  virtual double joules() const = 0;  // since start()
};

// A span of the monotonic clock (core/clock.hpp) whose energy counts: one measured phase.
struct TimeWindow {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

// The counter's joules since start() as read at one instant.
struct EnergyMark {
  std::int64_t t_ns = 0;
  double joules = 0.0;
};

// Joules used within `windows`, from marks in time order: the counter's value at each window edge
// is interpolated linearly between the marks around it (exact where a mark was taken at the edge;
// an edge outside the marks takes the nearest one).
double joules_within(const std::vector<EnergyMark>& marks, const std::vector<TimeWindow>& windows);

// Seconds the windows cover (the span the joules above are for).
double seconds_within(const std::vector<TimeWindow>& windows);

}  // namespace infermark::probes

// Process memory readings from /proc/self/status. Peak RSS is the kernel's own high-water
// mark (VmHWM), exact rather than sampled; it can be reset so one process can measure phases.
#pragma once

namespace infermark::probes {

struct MemoryReading {
  double rss_mb = 0.0;       // VmRSS
  double peak_rss_mb = 0.0;  // VmHWM
};

MemoryReading read_process_memory();

// Resident memory (VmRSS, MiB) of process `pid`; 0 once it is gone.
double process_rss_mb(int pid);

// Resets VmHWM to the current RSS (writes "5" to /proc/self/clear_refs). Returns false where the
// kernel refuses, in which case peak readings include everything since the process started.
bool reset_peak_rss();

}  // namespace infermark::probes

#include "loadgen/live_stats.hpp"

#include <cmath>

namespace infermark::loadgen {

LiveStats& LiveStats::global() {
  static LiveStats stats;
  return stats;
}

int LiveStats::bucket_of(std::int64_t latency_ns) {
  if (latency_ns < 1) return 0;
  const int bucket = static_cast<int>(std::log2(static_cast<double>(latency_ns)) * kBucketsPerOctave);
  return bucket < kBuckets ? bucket : kBuckets - 1;
}

void LiveStats::reset() {
  completed_.store(0, std::memory_order_relaxed);
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
}

double LiveStats::p99_ms() const {
  std::uint64_t total = 0;
  for (const auto& b : buckets_) total += b.load(std::memory_order_relaxed);
  if (total == 0) return 0.0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(0.99 * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= rank) return std::exp2(static_cast<double>(i + 1) / kBucketsPerOctave) * 1e-6;  // the bucket's upper edge
  }
  return 0.0;
}

}  // namespace infermark::loadgen

// Running figures a progress display may read while a run records: completed queries and a
// coarse lock-free latency histogram for a live P99. One per process (a worker measures one
// cell); the exact statistics live in the per-thread QueryRecorders.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace infermark::loadgen {

class LiveStats {
 public:
  static LiveStats& global();

  // Relaxed atomics: a few nanoseconds on the recording path, no lock, no allocation.
  void record(std::int64_t latency_ns) {
    completed_.fetch_add(1, std::memory_order_relaxed);
    buckets_[bucket_of(latency_ns)].fetch_add(1, std::memory_order_relaxed);
  }
  void reset();
  std::uint64_t completed() const { return completed_.load(std::memory_order_relaxed); }
  // P99 so far, in ms, to within a bucket (buckets grow by 2^(1/4), about 19%); 0 before any query.
  double p99_ms() const;

 private:
  static constexpr int kBucketsPerOctave = 4;
  static constexpr int kBuckets = 64 * kBucketsPerOctave;
  static int bucket_of(std::int64_t latency_ns);
  std::atomic<std::uint64_t> completed_{0};
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
};

}  // namespace infermark::loadgen

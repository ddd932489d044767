// The one seam between the load generator and whatever it measures, split as MLPerf LoadGen splits
// it: a *sample library* owns the samples (input sets, prompts, pipeline requests, remote request
// bodies) and groups them (a shape, a bucket); a *system under test* runs one query — one sample —
// at a time on each of its lanes. The load generator decides when queries arrive and which sample
// each one carries. In-process sessions, generators, pipelines and remote servers all implement
// this, so every scenario works on each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loadgen/shared_prefix.hpp"

namespace infermark::loadgen {

// What the load generator hands a lane: a query id (unique within a phase, in issue order) and the
// index of the sample it carries, drawn from the seed (sample_for_query).
struct Query {
  std::uint64_t id = 0;
  std::uint32_t sample = 0;
};

// What a query reports besides its completion, for systems that stream tokens (LLMs). The load
// generator owns one per lane and clears it before each query, so its capacity is reused.
struct Completion {
  std::vector<std::int64_t> token_ns;  // monotonic time each output token (or streamed piece) arrived; empty for tensors
  int prompt_tokens = 0;
  // Output tokens when the system knows better than the stamps (a server's usage count, where one
  // streamed piece may carry several tokens); 0: one token per stamp.
  int output_tokens = 0;
  PrefixWarmth prefix = PrefixWarmth::kUnshared;  // set by the system as it issues a shared-prefix prompt
  void clear() {
    token_ns.clear();
    prompt_tokens = 0;
    output_tokens = 0;
    prefix = PrefixWarmth::kUnshared;
  }
};

// The samples a system under test can run, and the groups latency is reported by (one group per
// distinct input shape or bucket; one group for a library whose samples are alike).
class SampleLibrary {
 public:
  virtual ~SampleLibrary() = default;
  virtual std::uint32_t sample_count() const = 0;
  virtual std::uint32_t group_count() const { return 1; }
  virtual std::uint32_t group_of(std::uint32_t /*sample*/) const { return 0; }
  // "input 1x3x224x224" — how reports name a group.
  virtual std::string group_label(std::uint32_t /*group*/) const { return "all"; }
};

// A library of one sample (a fixed input set, a fixed request).
class SingleSample final : public SampleLibrary {
 public:
  std::uint32_t sample_count() const override { return 1; }
};

class SystemUnderTest {
 public:
  virtual ~SystemUnderTest() = default;
  // Lanes that may run queries at the same time (clients, infer requests, sequence slots).
  virtual int lanes() const = 0;
  virtual const SampleLibrary& samples() const = 0;
  // Runs `query` on `lane` and returns when it completes; throws when the query fails. Streaming
  // systems stamp each token into `completion`.
  virtual void issue(int lane, const Query& query, Completion& completion) = 0;

  // Asynchronous systems (remote servers) keep many queries in flight from few threads: the load
  // generator then calls start() instead of issue() and blocks no thread per lane; lanes() is the
  // most queries in flight at once.
  virtual bool asynchronous() const { return false; }
  // Starts `query` and returns at once. `done(succeeded)` runs exactly once, on another thread and
  // never inside start(); tokens are stamped into `completion`, which stays valid until then.
  virtual void start(const Query& query, Completion& completion, std::function<void(bool succeeded)> done);
};

// issue() for an asynchronous system: start() the query and wait for it; throws when it failed.
void start_and_wait(SystemUnderTest& system, const Query& query, Completion& completion);

// The sample a query carries: a counter-based draw from (seed, query id), so the sequence is the
// same under any concurrency or thread interleaving, costs a few nanoseconds and never allocates.
inline std::uint32_t sample_for_query(std::uint64_t seed, std::uint64_t query_id, std::uint32_t sample_count) {
  if (sample_count <= 1) return 0;
  std::uint64_t z = seed + (query_id + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  // Lemire's multiply-shift maps 64 random bits onto [0, count) without a division.
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(z) * sample_count) >> 64);
}

}  // namespace infermark::loadgen

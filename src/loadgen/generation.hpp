// LLM load: requests of P prompt tokens and M output tokens kept C at a time in one continuously
// batched Generator, as a serving engine does — a finished sequence frees its slot and the next
// request joins the running batch at the following step. Records per-request token timestamps.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/generator.hpp"
#include "core/random.hpp"

namespace infermark::loadgen {

// A token count that is fixed (stddev 0) or drawn from a normal distribution, rounded and
// clamped to [1, max].
struct LengthDistribution {
  double mean = 128;
  double stddev = 0;
  int draw(SeededRandom& random, int max) const;
  std::string describe() const;  // "512" or "512 ± 64"
};

struct GenerationSpec {
  int concurrency = 1;                  // sequences in flight (batched together)
  std::uint64_t warmup_requests = 1;    // run first, not recorded
  std::uint64_t requests = 8;           // recorded
  double max_duration_s = 600;          // hard cap on the recorded phase
  LengthDistribution prompt_tokens{128, 0};
  LengthDistribution output_tokens{32, 0};
  std::uint64_t seed = 42;
};

// One request's life, monotonic ns. Token times are when each output token was handed to the
// callback; the first is the time to first token's end.
struct RequestRecord {
  int prompt_tokens = 0;
  int output_tokens = 0;
  std::int64_t start_ns = 0;             // queued on its slot
  std::vector<std::int64_t> token_ns;    // one per output token
};

struct GenerationOutcome {
  std::vector<RequestRecord> requests;  // recorded (completed) requests, in completion order
  double wall_s = 0;                    // first recorded start to last recorded completion
  std::int64_t measured_from_ns = 0;
  int steps = 0;                        // generator steps in the recorded phase
  bool interrupted = false;
  bool hit_duration_cap = false;
};

// Checks the spec against the generator (slots, context) and throws infermark::Error naming the
// flag: a prompt longer than the context, more concurrency than slots.
void check_generation_spec(const GenerationSpec& spec, const Generator& generator);

// Runs the warm-up then the recorded phase; stops early (keeping what completed) when `stop` is set
// or max_duration_s passes.
GenerationOutcome run_generation(Generator& generator, const GenerationSpec& spec, const std::atomic<bool>* stop = nullptr);

}  // namespace infermark::loadgen

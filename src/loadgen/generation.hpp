// What an LLM request is made of and leaves behind: prompt and output lengths (fixed or drawn) and
// each request's token timestamps, from which TTFT, TPOT and ITL are computed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "loadgen/service_targets.hpp"
#include "loadgen/shared_prefix.hpp"

namespace infermark::loadgen {

// A token count that is fixed (stddev 0) or drawn from a normal distribution, rounded and
// clamped to [1, max].
struct LengthDistribution {
  double mean = 128;
  double stddev = 0;
  int draw(SeededRandom& random, int max) const;
  std::string describe() const;  // "512" or "512 ± 64"
};

// One request's life, monotonic ns. Token times are when each output token was handed to the
// callback; the first is the time to first token's end.
struct RequestRecord {
  int prompt_tokens = 0;
  int output_tokens = 0;                          // 0 in hand-made records: one per stamp
  std::int64_t start_ns = 0;                      // its scheduled arrival (open loop) or issue (closed loop)
  std::vector<std::int64_t> token_ns;             // one per output token
  PrefixWarmth prefix = PrefixWarmth::kUnshared;  // shared-prefix workloads: whether its prefix was issued before
  std::uint32_t group = 0;                        // its sample's latency group (a conversation's turn)
  std::int64_t done_ns = 0;                       // the request's end (its response complete); 0: its last token
};

// TTFT from start to the first token, end to end from start to done, TPOT (integer ns) over the
// tokens after the first, as its service targets judge them.
RequestLatencies latencies_of(const RequestRecord& request);
std::vector<RequestLatencies> latencies_of(const std::vector<RequestRecord>& requests);

}  // namespace infermark::loadgen

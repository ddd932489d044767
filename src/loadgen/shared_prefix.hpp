// Shared-prefix LLM workloads: requests fall into groups, each group's prompts starting with the
// same prefix (a system prompt, a document several questions are asked about) followed by a
// suffix of their own. Engines that cache a prefix's KV state answer a request whose prefix was
// already seen sooner; the load generator therefore marks each request warm or cold as it issues
// it, and reports TTFT apart for the two.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace infermark::loadgen {

struct SharedPrefix {
  int groups = 0;  // 0: no shared prefix, every prompt its own
  int tokens = 0;  // each group's prefix length (prompt tokens in `run`, words in `load`)
  bool enabled() const { return groups > 0; }
  std::string describe() const;  // "8 groups x 512 tokens", "none"
};

// "GROUPS:TOKENS" (e.g. 8:512); "" or "0" for none. Throws infermark::Error naming `flag`.
SharedPrefix parse_shared_prefix(const std::string& text, const std::string& flag = "--shared-prefix");

// The seed of the random stream prefixes and groups are drawn from: apart from the prompts' own,
// so adding a shared prefix leaves each prompt's own tokens or words as they were without one.
inline std::uint64_t prefix_stream_seed(std::uint64_t seed) { return seed ^ 0x5348415245440000ull; }

// Whether a request's prefix had been issued before it, since the system under test was made
// (warm-up included: an engine's cache does not know which requests were measured).
enum class PrefixWarmth : std::uint8_t { kUnshared, kCold, kWarm };
std::string_view name_of(PrefixWarmth warmth);  // "unshared", "cold", "warm"
// The enum from its stored number (a recorder's JSON); throws infermark::Error outside the range.
PrefixWarmth prefix_warmth_from(int stored);

// Marks requests warm or cold as they are issued; safe to call from every lane at once.
class PrefixWarmthTracker {
 public:
  explicit PrefixWarmthTracker(int groups);
  // `group` is the request's prefix group, none for a prompt without a shared prefix.
  PrefixWarmth on_issue(std::optional<std::uint32_t> group);

 private:
  int groups_;
  std::unique_ptr<std::atomic<bool>[]> issued_;
};

}  // namespace infermark::loadgen

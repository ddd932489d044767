// Multi-turn conversations: each closed-loop client is a user holding one conversation at a time,
// of `turns` requests; each turn's prompt is the whole history so far (every earlier user message
// and answer) plus a new user message, and the user thinks between turns. A conversation's turns
// run in order, one after the other; conversations of different clients interleave. The sample
// library holds the conversations turn by turn (sample = conversation x turns + turn), and the
// turn is each sample's group, so latency is reported per turn.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "loadgen/system_under_test.hpp"

namespace infermark::loadgen {

struct Conversation {
  int turns = 0;              // 0 or 1: independent requests
  double think_s = 0;         // mean pause between a turn's answer and the next turn
  double think_stddev_s = 0;  // 0: always think_s; else normal draws, never below 0
  bool enabled() const { return turns > 1; }
  std::string describe() const;  // "4 turns, think 2 s ± 0.5 s", "none"
};

// How many conversations a library holds: about 1024 requests in all, at least one conversation
// (a longer run starts them over, and an engine that kept them finds them warm).
std::uint32_t conversations_in_library(int turns);

// The whole conversations a library of `samples` samples holds (sample = conversation x turns +
// turn); throws infermark::Error when it holds not even one (an internal error: the libraries
// are built for the workload).
std::uint32_t conversations_held(const Conversation& conversation, std::uint32_t samples);
// The sample of turn `turn` of the `number`-th conversation started, over a library of `held`
// conversations (started over once they are used up).
std::uint32_t conversation_sample(const Conversation& conversation, std::uint64_t number, int turn, std::uint32_t held);

// A conversation library's latency groups: the turn (sample = conversation x turns + turn); one
// group "all" when there are no conversations.
struct TurnGroups {
  int turns = 0;
  std::uint32_t count() const { return turns > 1 ? static_cast<std::uint32_t>(turns) : 1; }
  std::uint32_t of(std::uint32_t sample) const { return turns > 1 ? sample % static_cast<std::uint32_t>(turns) : 0; }
  std::string label(std::uint32_t group) const;  // "turn 1" (counted from 1), or "all"
};

// `count` samples held elsewhere (request bodies), grouped by turn as a conversation library's are.
class TurnLibrary final : public SampleLibrary {
 public:
  TurnLibrary(std::uint32_t count, TurnGroups turns) : count_(count), turns_(turns) {}
  std::uint32_t sample_count() const override { return count_; }
  std::uint32_t group_count() const override { return turns_.count(); }
  std::uint32_t group_of(std::uint32_t sample) const override { return turns_.of(sample); }
  std::string group_label(std::uint32_t group) const override { return turns_.label(group); }

 private:
  std::uint32_t count_;
  TurnGroups turns_;
};

// The pause before turn `turn` (>= 1) of conversation `conversation`, ns: a draw of its own from
// the seed, so it is the same under any concurrency.
std::int64_t think_ns(const Conversation& conversation, std::uint64_t seed, std::uint64_t conversation_id, int turn);

// One client's place in its conversations, for the closed loop.
class ConversationCursor {
 public:
  // The sample of the client's next query: the next turn of its conversation, or turn 0 of a new
  // one (numbered from `started`, shared by the clients) over `conversations` in the library.
  std::uint32_t next_sample(const Conversation& conversation, std::atomic<std::uint64_t>& started, std::uint32_t conversations);
  // After the query: a failed turn ends its conversation (the history it needs is missing). The
  // pause before the next query (0 after a last turn or a failure).
  std::int64_t after_query(const Conversation& conversation, std::uint64_t seed, bool succeeded);

 private:
  std::uint64_t conversation_ = 0;
  int turn_ = 0;  // the turn the last query carried
  bool open_ = false;
};

}  // namespace infermark::loadgen

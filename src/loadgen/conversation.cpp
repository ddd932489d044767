#include "loadgen/conversation.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::loadgen {

std::string Conversation::describe() const {
  if (!enabled()) return "none";
  return fmt::format("{} turns, think {:g} s{}", turns, think_s,
                     think_stddev_s > 0 ? fmt::format(" ± {:g} s", think_stddev_s) : std::string());
}

std::uint32_t conversations_in_library(int turns) { return static_cast<std::uint32_t>(std::max(1, 1024 / std::max(turns, 1))); }

std::uint32_t conversations_held(const Conversation& conversation, std::uint32_t samples) {
  const auto turns = static_cast<std::uint32_t>(std::max(conversation.turns, 1));
  if (samples < turns)
    throw Error("internal error: a conversation workload's library holds fewer samples than one conversation's turns");
  return samples / turns;
}

std::uint32_t conversation_sample(const Conversation& conversation, std::uint64_t number, int turn, std::uint32_t held) {
  const auto in_library = static_cast<std::uint32_t>(number % std::max<std::uint32_t>(held, 1));
  return in_library * static_cast<std::uint32_t>(conversation.turns) + static_cast<std::uint32_t>(turn);
}

std::string TurnGroups::label(std::uint32_t group) const { return turns > 1 ? fmt::format("turn {}", group + 1) : "all"; }

std::int64_t think_ns(const Conversation& conversation, std::uint64_t seed, std::uint64_t conversation_id, int turn) {
  double seconds = conversation.think_s;
  if (conversation.think_stddev_s > 0) {
    SeededRandom random(seed ^
                        (0x5448494E4B000000ull + conversation_id * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(turn)));
    seconds = std::max(0.0, seconds + conversation.think_stddev_s * random.normal());
  }
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

std::uint32_t ConversationCursor::next_sample(const Conversation& conversation, std::atomic<std::uint64_t>& started,
                                              std::uint32_t conversations) {
  if (open_) {
    ++turn_;
  } else {
    conversation_ = started.fetch_add(1, std::memory_order_relaxed);
    turn_ = 0;
    open_ = true;
  }
  return conversation_sample(conversation, conversation_, turn_, conversations);
}

std::int64_t ConversationCursor::after_query(const Conversation& conversation, std::uint64_t seed, bool succeeded) {
  if (!succeeded || turn_ + 1 >= conversation.turns) {
    open_ = false;
    return 0;
  }
  return think_ns(conversation, seed, conversation_, turn_ + 1);
}

}  // namespace infermark::loadgen

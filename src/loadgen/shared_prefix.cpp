#include "loadgen/shared_prefix.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "core/error.hpp"

namespace infermark::loadgen {
namespace {

int positive_integer(std::string_view text, const std::string& flag, const std::string& whole, const char* what) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 1)
    throw Error(fmt::format("{} '{}': {} must be a whole number of at least 1 (GROUPS:TOKENS, e.g. 8:512)", flag, whole, what));
  return value;
}

}  // namespace

std::string SharedPrefix::describe() const {
  return enabled() ? fmt::format("{} group{} x {} tokens", groups, groups == 1 ? "" : "s", tokens) : "none";
}

SharedPrefix parse_shared_prefix(const std::string& text, const std::string& flag) {
  if (text.empty() || text == "0") return {};
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw Error(fmt::format("{} '{}': expected GROUPS:TOKENS (e.g. 8:512: 8 prefixes of 512 tokens each)", flag, text));
  const std::string_view whole(text);
  return {positive_integer(whole.substr(0, colon), flag, text, "GROUPS"),
          positive_integer(whole.substr(colon + 1), flag, text, "TOKENS")};
}

std::string_view name_of(PrefixWarmth warmth) {
  switch (warmth) {
    case PrefixWarmth::kCold:
      return "cold";
    case PrefixWarmth::kWarm:
      return "warm";
    case PrefixWarmth::kUnshared:
      break;
  }
  return "unshared";
}

PrefixWarmth prefix_warmth_from(int stored) {
  if (stored < 0 || stored > static_cast<int>(PrefixWarmth::kWarm))
    throw Error(fmt::format("a request's prefix warmth {} is none of unshared (0), cold (1), warm (2)", stored));
  return static_cast<PrefixWarmth>(stored);
}

PrefixWarmthTracker::PrefixWarmthTracker(int groups)
    : groups_(std::max(groups, 0)), issued_(std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(groups_))) {}

PrefixWarmth PrefixWarmthTracker::on_issue(std::optional<std::uint32_t> group) {
  if (!group || *group >= static_cast<std::uint32_t>(groups_)) return PrefixWarmth::kUnshared;
  return issued_[*group].exchange(true, std::memory_order_relaxed) ? PrefixWarmth::kWarm : PrefixWarmth::kCold;
}

}  // namespace infermark::loadgen

// Shared-prefix workloads: the flag's parser, the warm/cold marking as requests are issued, the
// recorder keeping the marking through its JSON (distributed runs merge recorders that way), and
// `load`'s prompts getting their group's prefix as a system message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "loadgen/query_recorder.hpp"
#include "loadgen/shared_prefix.hpp"
#include "remote/openai_system.hpp"

namespace infermark::loadgen {
namespace {

TEST(SharedPrefix, ParsesGroupsAndTokensAndNamesTheFlagOnBadText) {
  const auto parsed = parse_shared_prefix("8:512");
  EXPECT_EQ(parsed.groups, 8);
  EXPECT_EQ(parsed.tokens, 512);
  EXPECT_TRUE(parsed.enabled());
  EXPECT_EQ(parsed.describe(), "8 groups x 512 tokens");
  EXPECT_FALSE(parse_shared_prefix("").enabled());
  EXPECT_FALSE(parse_shared_prefix("0").enabled());
  for (const char* bad : {"8", "0:5", "8:0", "a:5", "8:-1", "8:5x", ":5", "8:"}) {
    try {
      parse_shared_prefix(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--shared-prefix '") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(SharedPrefix, OnlyTheFirstRequestOfAGroupIsColdEvenFromManyThreads) {
  PrefixWarmthTracker tracker(4);
  EXPECT_EQ(tracker.on_issue(std::nullopt), PrefixWarmth::kUnshared);
  EXPECT_EQ(tracker.on_issue(9u), PrefixWarmth::kUnshared);  // outside the groups: not a shared prefix
  std::vector<std::thread> lanes;
  std::vector<std::vector<PrefixWarmth>> seen(8);
  for (int lane = 0; lane < 8; ++lane)
    lanes.emplace_back([&, lane] {
      for (std::uint32_t i = 0; i < 1000; ++i) seen[static_cast<std::size_t>(lane)].push_back(tracker.on_issue(i % 4));
    });
  for (auto& lane : lanes) lane.join();
  std::size_t cold = 0;
  for (const auto& warmths : seen)
    for (auto w : warmths) cold += w == PrefixWarmth::kCold;
  EXPECT_EQ(cold, 4u);
}

TEST(SharedPrefix, TheRecordersJsonKeepsEachRequestsWarmthAndReadsOlderRows) {
  QueryRecorder recorder(RecorderLimits{});
  Completion completion;
  completion.token_ns = {110, 120};
  completion.prefix = PrefixWarmth::kWarm;
  recorder.record_query(0, 100, 130, 0, completion);
  completion.prefix = PrefixWarmth::kCold;
  recorder.record_query(0, 100, 130, 0, completion);
  auto j = recorder.to_json();
  const auto back = QueryRecorder::from_json(j);
  ASSERT_EQ(back.requests().size(), 2u);
  EXPECT_EQ(back.requests()[0].prefix, PrefixWarmth::kWarm);
  EXPECT_EQ(back.requests()[1].prefix, PrefixWarmth::kCold);
  for (auto& row : j["requests"]) row.erase(6), row.erase(5), row.erase(4);  // written before shared prefixes (turns, ends)
  EXPECT_EQ(QueryRecorder::from_json(j).requests()[0].prefix, PrefixWarmth::kUnshared);
  j["requests"][0].push_back(7);  // no such warmth
  EXPECT_THROW(QueryRecorder::from_json(j), Error);
}

TEST(SharedPrefix, LoadPromptsOfAGroupCarryTheSamePrefixAndKeepTheirOwnText) {
  const LengthDistribution words{12, 0}, output{8, 0};
  auto prompts = remote::synthetic_prompts(words, output, 42, 100);
  const auto plain = prompts;
  remote::add_shared_prefixes(prompts, SharedPrefix{3, 40}, 42);
  std::map<std::uint32_t, std::string> prefix_of_group;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(prompts[i].prefix_group.has_value());
    EXPECT_EQ(prompts[i].text, plain[i].text);
    auto [known, first] = prefix_of_group.emplace(*prompts[i].prefix_group, prompts[i].prefix);
    EXPECT_EQ(known->second, prompts[i].prefix);
  }
  ASSERT_EQ(prefix_of_group.size(), 3u);
  EXPECT_NE(prefix_of_group[0], prefix_of_group[1]);
  EXPECT_EQ(std::count(prefix_of_group[0].begin(), prefix_of_group[0].end(), ' '), 39);  // 40 words
  auto unchanged = plain;
  remote::add_shared_prefixes(unchanged, SharedPrefix{}, 42);
  EXPECT_FALSE(unchanged[0].prefix_group.has_value());
  EXPECT_TRUE(unchanged[0].prefix.empty());
}

TEST(SharedPrefix, LoadPromptsFromADatasetAreWindowsOfItsWords) {
  const auto text = std::filesystem::temp_directory_path() / "infermark-words-test.txt";
  {
    std::ofstream out(text);
    out << "one two three\nfour  five six seven";
  }
  const auto words = remote::PromptWords::corpus(text);
  EXPECT_NE(words.describe().find("7 words"), std::string::npos) << words.describe();
  const std::string twice = "one two three four five six seven one two three four five six seven";
  for (const auto& prompt : remote::synthetic_prompts(LengthDistribution{5, 0}, LengthDistribution{4, 0}, 42, 20, words)) {
    EXPECT_EQ(std::count(prompt.text.begin(), prompt.text.end(), ' '), 4) << prompt.text;  // 5 words
    EXPECT_NE(twice.find(prompt.text), std::string::npos) << prompt.text;                  // a window, wrapping round
  }
  std::filesystem::remove(text);
  EXPECT_THROW(remote::PromptWords::corpus(text), Error);
}

}  // namespace
}  // namespace infermark::loadgen

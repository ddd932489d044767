// Multi-turn conversations: a client's turns in order with a think pause between them (on the
// thread-per-client loop and on the asynchronous one), the pause kept out of latency, a failed
// turn ending its conversation, latency per turn, the flags' checks, and `load`'s conversation
// prompts carrying their history.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/conversation.hpp"
#include "loadgen/generation_metrics.hpp"
#include "loadgen/open_loop.hpp"
#include "loadgen/query_recorder.hpp"
#include "loadgen/scenario.hpp"
#include "remote/openai_system.hpp"
#include "unit/fake_async_system.hpp"
#include "unit/fake_system.hpp"

namespace infermark::loadgen {
namespace {

using namespace std::chrono_literals;

// A library of `conversations` conversations of `turns` turns, grouped by turn as the real ones are.
TurnLibrary conversations(std::uint32_t count, int turns) {
  return TurnLibrary(count * static_cast<std::uint32_t>(turns), TurnGroups{turns});
}

// A system of `lanes` lanes (thread per client, or asynchronous) over `library`, 1 ms per query.
template <typename System>
std::unique_ptr<System> system_over(const SampleLibrary& library, int lanes) {
  auto system = std::make_unique<System>(lanes, 1ms);
  system->library_ = &library;
  return system;
}

ClosedLoopConfig talking(int clients, std::uint64_t queries, int turns, double think_s) {
  ClosedLoopConfig c;
  c.concurrency = clients;
  c.max_queries = queries;
  c.max_duration_s = 60;
  c.conversation = Conversation{turns, think_s, 0};
  return c;
}

// Each conversation's turns were issued in order from its first, each at least `think_ns` after
// the one before it (a turn starts after its answer and the pause). The run's query limit may cut
// the last conversations short (the clients claim queries from one count). Returns how many
// conversations ran whole.
std::size_t expect_turns_in_order(const std::vector<Query>& queries, const std::vector<std::int64_t>& times_ns, int turns,
                                  std::int64_t think_ns) {
  std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int64_t>>> by_conversation;  // turn, time
  for (std::size_t i = 0; i < queries.size(); ++i)
    by_conversation[queries[i].sample / static_cast<std::uint32_t>(turns)].emplace_back(
        queries[i].sample % static_cast<std::uint32_t>(turns), times_ns[i]);
  std::size_t whole = 0;
  for (const auto& [conversation, issued] : by_conversation) {
    EXPECT_LE(issued.size(), static_cast<std::size_t>(turns)) << "conversation " << conversation;
    whole += issued.size() == static_cast<std::size_t>(turns);
    for (std::size_t t = 0; t < issued.size(); ++t) {
      EXPECT_EQ(issued[t].first, t) << "conversation " << conversation;
      if (t > 0) {
        EXPECT_GE(issued[t].second - issued[t - 1].second, think_ns) << "conversation " << conversation << " turn " << t;
      }
    }
  }
  return whole;
}

// `clients` users run `queries` queries of conversations of `turns` turns, thinking `think_s`
// between turns: each conversation's turns in order, at least whole conversations `least_whole`;
// latency below a pause (it would hold one if it counted the pause); per turn, as many requests
// as at the turn after (every conversation starts at its first).
template <typename System>
void expect_ordered_turns_outside_latency(int clients, std::uint64_t queries, int turns, double think_s,
                                          std::size_t least_whole) {
  const auto library = conversations(16, turns);
  auto system = system_over<System>(library, clients);
  const auto phase = run_closed_loop(*system, talking(clients, queries, turns, think_s));
  ASSERT_EQ(system->queries.size(), queries);
  const auto think_ns = static_cast<std::int64_t>(think_s * 1e9);
  EXPECT_GE(expect_turns_in_order(system->queries, system->issue_times_ns, turns, think_ns), least_whole);
  EXPECT_LT(phase.recorder.latency().value_at_percentile(99), think_ns);
  const auto& by_turn = phase.recorder.latency_by_group();
  ASSERT_EQ(by_turn.size(), static_cast<std::size_t>(turns));
  std::uint64_t total = 0;
  for (std::size_t t = 0; t < by_turn.size(); ++t) {
    total += by_turn[t].count();
    if (t > 0) {
      EXPECT_GE(by_turn[t - 1].count(), by_turn[t].count()) << "turn " << t + 1;
    }
  }
  EXPECT_EQ(total, queries);
}

}  // namespace

TEST(Conversation, ACursorWalksItsConversationThenStartsTheNextOneShared) {
  const Conversation three{3, 0.5, 0};
  std::atomic<std::uint64_t> started{0};
  ConversationCursor a, b;
  EXPECT_EQ(a.next_sample(three, started, 10), 0u);  // conversation 0, turn 0
  EXPECT_EQ(b.next_sample(three, started, 10), 3u);  // conversation 1, turn 0
  EXPECT_EQ(a.after_query(three, 42, true), 500'000'000);
  EXPECT_EQ(a.next_sample(three, started, 10), 1u);
  EXPECT_EQ(a.after_query(three, 42, true), 500'000'000);
  EXPECT_EQ(a.next_sample(three, started, 10), 2u);
  EXPECT_EQ(a.after_query(three, 42, true), 0);      // the last turn: no pause, a new conversation
  EXPECT_EQ(a.next_sample(three, started, 10), 6u);  // conversation 2
  EXPECT_EQ(b.after_query(three, 42, false), 0);     // a failed turn ends its conversation
  EXPECT_EQ(b.next_sample(three, started, 10), 9u);  // conversation 3, turn 0
  EXPECT_EQ(started.load(), 4u);
  std::atomic<std::uint64_t> wrapped{0};
  ConversationCursor c;
  for (int i = 0; i < 2; ++i) {  // more conversations than the library holds: they repeat
    EXPECT_EQ(c.next_sample(three, wrapped, 1), 0u);
    c.after_query(three, 42, false);
  }
}

TEST(Conversation, ThinkTimesAreSeededPerConversationAndTurnAndNeverNegative) {
  const Conversation fixed{4, 1.5, 0}, drawn{4, 0.2, 1.0};
  EXPECT_EQ(think_ns(fixed, 1, 7, 2), 1'500'000'000);
  EXPECT_EQ(think_ns(drawn, 9, 3, 1), think_ns(drawn, 9, 3, 1));
  std::set<std::int64_t> seen;
  for (std::uint64_t conversation = 0; conversation < 50; ++conversation)
    for (int turn = 1; turn < 4; ++turn) {
      const auto pause = think_ns(drawn, 9, conversation, turn);
      EXPECT_GE(pause, 0);
      seen.insert(pause);
    }
  EXPECT_GT(seen.size(), 50u);   // draws, not one value
  EXPECT_LT(seen.size(), 150u);  // a mean of 0.2 s and a deviation of 1 s: many draws clamp to 0
  EXPECT_EQ(Conversation{}.describe(), "none");
  EXPECT_EQ(drawn.describe(), "4 turns, think 0.2 s ± 1 s");
}

TEST(Conversation, EachClientsTurnsRunInOrderWithTheirPauseOutsideLatency) {
  expect_ordered_turns_outside_latency<testing::FakeSystem>(2, 12, 3, 0.15, 3);  // 4 whole conversations unless cut
  EXPECT_EQ(conversations(1, 3).group_label(2), "turn 3");
}

TEST(Conversation, AnAsynchronousSystemsUsersThinkOnATimerAndKeepTheirOrder) {
  expect_ordered_turns_outside_latency<testing::FakeAsyncSystem>(4, 16, 4, 0.1, 1);
}

namespace {

// Open loop: 20 conversations/s for 0.5 s, evenly spaced, start 10 conversations of 3 turns; each
// later turn arrives 50 ms after the turn before was answered. Every conversation started runs
// whole, the last one's turns after the schedule's end, in order, and latency runs from each
// turn's own arrival.
template <typename System>
void expect_open_loop_conversations() {
  const auto library = conversations(64, 3);
  auto system = system_over<System>(library, 4);
  OpenLoopConfig config;
  config.schedule = {{0.5, 20}};
  config.arrivals = Arrivals::kConstant;  // starts at 0, 50, ..., 450 ms
  config.lanes = 4;
  config.seed = 7;
  config.conversation = Conversation{3, 0.05, 0};
  const auto phase = run_open_loop(*system, config);
  const auto started = static_cast<std::size_t>(
      std::count_if(system->queries.begin(), system->queries.end(), [](const Query& q) { return q.sample % 3 == 0; }));
  EXPECT_EQ(started, 10u);
  EXPECT_EQ(expect_turns_in_order(system->queries, system->issue_times_ns, 3, 50'000'000), started);
  EXPECT_EQ(system->queries.size(), 3 * started);
  EXPECT_EQ(phase.recorder.completed(), 3 * started);
  EXPECT_EQ(phase.recorder.errors() + phase.recorder.rejected(), 0u);
  EXPECT_EQ(phase.issued, 3 * started);
  EXPECT_GT(phase.duration_s, 0.5);  // the last one started at 450 ms, then two answers and pauses
  EXPECT_LT(phase.recorder.latency().value_at_percentile(99), 50'000'000);  // not from the conversation's start
  const auto& by_turn = phase.recorder.latency_by_group();
  ASSERT_EQ(by_turn.size(), 3u);
  for (const auto& turn : by_turn) EXPECT_EQ(turn.count(), started);
}

}  // namespace

TEST(Conversation, OpenLoopArrivalsStartConversationsWhoseLaterTurnsFollowTheirAnswers) {
  expect_open_loop_conversations<testing::FakeSystem>();
  expect_open_loop_conversations<testing::FakeAsyncSystem>();
}

// A turn the queue rejects ends its conversation: nothing follows it, and the run still ends.
TEST(Conversation, ARejectedOpenLoopTurnEndsItsConversation) {
  const auto library = conversations(64, 3);
  testing::FakeSystem system(1, 20ms);
  system.library_ = &library;
  OpenLoopConfig config;
  config.schedule = {{0.3, 100}};  // far more than one 20 ms lane with a queue of 1 serves
  config.lanes = 1;
  config.max_queue = 1;
  config.conversation = Conversation{3, 0.0, 0};
  const auto before = mono_now_ns();
  const auto phase = run_open_loop(system, config);
  EXPECT_LT(mono_now_ns() - before, 10'000'000'000);
  EXPECT_GT(phase.recorder.rejected(), 0u);
  expect_turns_in_order(system.queries, system.issue_times_ns, 3, 0);
  EXPECT_EQ(phase.recorder.completed() + phase.recorder.rejected() + phase.recorder.errors(), phase.issued);
}

TEST(Conversation, TheRunEndsAtItsCapOrStopWhileUsersAreThinking) {
  for (const bool asynchronous : {false, true}) {  // the last query claimed: the phase ends with its answer
    const auto library = conversations(8, 5);
    const auto config = talking(2, 2, 5, 30.0);
    const auto before = mono_now_ns();
    const auto phase = asynchronous ? run_closed_loop(*system_over<testing::FakeAsyncSystem>(library, 2), config)
                                    : run_closed_loop(*system_over<testing::FakeSystem>(library, 2), config);
    EXPECT_LT(mono_now_ns() - before, 10'000'000'000) << "asynchronous " << asynchronous;
    EXPECT_EQ(phase.recorder.completed(), 2u);
    EXPECT_LT(phase.duration_s, 5.0) << "asynchronous " << asynchronous;  // no pause in the phase's time
  }
  for (const bool asynchronous : {false, true}) {
    const auto library = conversations(8, 5);
    auto config = talking(2, 1000, 5, 30.0);  // half a minute of thought per turn
    config.max_duration_s = 0.3;
    const auto before = mono_now_ns();
    const auto phase = asynchronous ? run_closed_loop(*system_over<testing::FakeAsyncSystem>(library, 2), config)
                                    : run_closed_loop(*system_over<testing::FakeSystem>(library, 2), config);
    EXPECT_LT(mono_now_ns() - before, 10'000'000'000) << "asynchronous " << asynchronous;  // not 30 s: the cap cut the pause
    EXPECT_EQ(phase.recorder.completed(), 2u) << "asynchronous " << asynchronous;          // each client's first turn only
  }
  const auto library = conversations(8, 5);
  auto system = system_over<testing::FakeSystem>(library, 1);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    stop = true;
  });
  const auto before = mono_now_ns();
  run_closed_loop(*system, talking(1, 1000, 5, 30.0), &stop);
  stopper.join();
  EXPECT_LT(mono_now_ns() - before, 10'000'000'000);
}

TEST(Conversation, AFailedTurnEndsItsConversationAndTheClientStartsANewOne) {
  const auto library = conversations(16, 3);
  testing::FakeSystem system(1, 0us);
  system.library_ = &library;
  system.fail_every = 2;  // the second query of the run fails: conversation 0 stops at turn 1
  run_closed_loop(system, talking(1, 5, 3, 0.0));
  ASSERT_GE(system.queries.size(), 5u);
  EXPECT_EQ(system.queries[0].sample, 0u);
  EXPECT_EQ(system.queries[1].sample, 1u);  // failed
  EXPECT_EQ(system.queries[2].sample, 3u);  // conversation 1, turn 0
}

TEST(Conversation, ALibraryShorterThanOneConversationIsRefused) {
  testing::FakeSystem system(1, 0us);  // a single sample
  EXPECT_THROW(run_closed_loop(system, talking(1, 4, 3, 0.0)), Error);
}

TEST(Conversation, TheFlagsAreCheckedAgainstTheScenario) {
  ScenarioSpec spec;
  spec.name = Scenario::kConcurrency;
  spec.concurrency = 2;
  spec.conversation = Conversation{3, 1.0, 0.5};
  EXPECT_NO_THROW(validate(spec));
  auto expect_refused = [](const ScenarioSpec& s, const std::string& flag) {
    try {
      validate(s);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  };
  auto server = spec;
  server.name = Scenario::kServer;
  server.qps = 5;
  EXPECT_NO_THROW(validate(server));  // --qps starts conversations
  auto ramp = spec;
  ramp.name = Scenario::kRamp;
  expect_refused(ramp, "--turns");
  auto shared = spec;
  shared.shared_prefix = SharedPrefix{2, 16};
  expect_refused(shared, "--turns");
  auto negative = spec;
  negative.conversation.think_s = -1;
  expect_refused(negative, "--think-time");
}

TEST(Conversation, RequestsKeepTheirTurnThroughTheRecorderAndAreSummarizedPerTurn) {
  QueryRecorder recorder(RecorderLimits{});
  Completion completion;
  for (std::uint32_t turn = 0; turn < 3; ++turn) {
    completion.clear();
    completion.prompt_tokens = 100 * static_cast<int>(turn + 1);
    completion.token_ns = {1000 + 1000 * static_cast<std::int64_t>(turn), 5000};
    recorder.record_query(0, 0, 5000, turn, completion);
  }
  auto j = recorder.to_json();
  const auto back = QueryRecorder::from_json(j);
  ASSERT_EQ(back.requests().size(), 3u);
  EXPECT_EQ(back.requests()[2].group, 2u);
  for (auto& row : j["requests"]) row.erase(6), row.erase(5);  // a recorder written before conversations (and ends)
  EXPECT_EQ(QueryRecorder::from_json(j).requests()[2].group, 0u);

  auto metrics = summarize_requests(back.requests(), 1.0);
  label_groups(metrics, conversations(1, 3));
  ASSERT_EQ(metrics.by_group.size(), 3u);
  EXPECT_EQ(metrics.by_group[1].label, "turn 2");
  EXPECT_EQ(metrics.by_group[1].requests, 1u);
  EXPECT_DOUBLE_EQ(metrics.by_group[1].prompt_tokens_mean, 200);
  EXPECT_NEAR(metrics.by_group[2].ttft_ms->mean, 0.003, 1e-9);
  EXPECT_TRUE(summarize_requests({back.requests()[0]}, 1.0).by_group.empty());  // one group: nothing apart
}

TEST(Conversation, LoadPromptsCarryTheirConversationsHistoryTurnByTurn) {
  const Conversation four{4, 0, 0};
  const auto prompts = remote::conversation_prompts(LengthDistribution{12, 3}, LengthDistribution{6, 0}, four, 7);
  ASSERT_EQ(prompts.size(), conversations_in_library(4) * 4u);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const auto turn = static_cast<std::uint32_t>(i % 4);
    EXPECT_EQ(prompts[i].turn, turn);
    ASSERT_EQ(prompts[i].history.size(), 2u * turn);
    if (turn == 0) continue;
    const auto& before = prompts[i - 1];
    for (std::size_t h = 0; h < before.history.size(); ++h) EXPECT_EQ(prompts[i].history[h], before.history[h]);
    EXPECT_EQ(prompts[i].history[2 * turn - 2], before.text);  // the last message, then its answer of the asked length
    const auto& answer = prompts[i].history[2 * turn - 1];
    EXPECT_EQ(static_cast<int>(std::count(answer.begin(), answer.end(), ' ')) + 1, before.max_tokens);
  }
  EXPECT_EQ(remote::conversation_prompts(LengthDistribution{12, 3}, LengthDistribution{6, 0}, four, 7)[13].text,
            prompts[13].text);
}

}  // namespace infermark::loadgen

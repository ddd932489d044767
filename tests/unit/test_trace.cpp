// Trace replay: each public format parses to arrivals and lengths (bad rows named by file, line and
// field), the format is told from the file, and the open loop issues the k-th request at its
// recorded time carrying the k-th sample.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "loadgen/open_loop.hpp"
#include "loadgen/scenario.hpp"
#include "loadgen/trace.hpp"
#include "unit/fake_system.hpp"

namespace infermark::loadgen {
namespace {

using namespace std::chrono_literals;

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Trace mooncake(const std::string& text) {
  std::istringstream in(text);
  return parse_mooncake(in, "m.jsonl");
}

std::filesystem::path written(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("infermark-trace-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(Trace, MooncakeLinesGiveMillisecondArrivalsLengthsAndBlocks) {
  const auto t = mooncake(R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]})"
                          "\n\n"
                          R"({"timestamp": 1500, "input_length": 100, "output_length": 7, "hash_ids": [0]})"
                          "\n");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.block_tokens, 512);
  EXPECT_DOUBLE_EQ(t.requests[1].arrival_s, 1.5);
  EXPECT_EQ(t.requests[0].input_tokens, 600);
  EXPECT_EQ(t.requests[1].output_tokens, 7);
  EXPECT_EQ(t.requests[0].blocks, (std::vector<std::uint64_t>{0, 1}));
  // Of three blocks, one repeats an earlier request's.
  const auto s = summarize(t, 2.0);
  EXPECT_DOUBLE_EQ(*s.block_reuse_share, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.replayed_span_s, 0.75);
  EXPECT_DOUBLE_EQ(s.mean_rate_rps, 2 / 0.75);
  EXPECT_EQ(s.max_input_tokens, 600);
}

TEST(Trace, RequestsAreGroupedByTheirFirstBlockForWarmAndColdPrefixes) {
  const auto t = mooncake(R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [7, 1]})"
                          "\n"
                          R"({"timestamp": 1, "input_length": 100, "output_length": 7, "hash_ids": []})"
                          "\n"
                          R"({"timestamp": 2, "input_length": 900, "output_length": 7, "hash_ids": [3, 1]})"
                          "\n"
                          R"({"timestamp": 3, "input_length": 600, "output_length": 7, "hash_ids": [7, 2]})"
                          "\n");
  const auto grouped = first_block_groups(t);
  EXPECT_EQ(grouped.groups, 2u);  // blocks 7 and 3 start prompts; block 1 never does
  ASSERT_EQ(grouped.of_request.size(), 4u);
  EXPECT_EQ(grouped.of_request[0], 0u);
  EXPECT_FALSE(grouped.of_request[1].has_value());  // no blocks: not a shared prefix
  EXPECT_EQ(grouped.of_request[2], 1u);
  EXPECT_EQ(grouped.of_request[3], 0u);  // block 7 again: warm once the first request was issued
}

TEST(Trace, MooncakeErrorsNameTheLineAndTheField) {
  EXPECT_EQ(error_of([] { mooncake("{\"timestamp\": 0, \"output_length\": 3}\n"); }), "m.jsonl:1: input_length: missing");
  EXPECT_EQ(error_of([] { mooncake("\n{\"timestamp\": 0, \"input_length\": 2.5, \"output_length\": 3}\n"); }),
            "m.jsonl:2: input_length: 2.5 is not a whole number of at least 0");
  EXPECT_EQ(error_of([] { mooncake("[1, 2]\n"); }), "m.jsonl:1: not a JSON object (a Mooncake trace has one request per line)");
  EXPECT_EQ(error_of([] { mooncake("{\"input_length\": 3, \"output_length\": 3}\n"); }),
            "m.jsonl:1: timestamp: missing or not a number of milliseconds of at least 0");
  EXPECT_EQ(error_of([] { mooncake(R"({"timestamp": 0, "input_length": 1100, "output_length": 3, "hash_ids": [4, 5]})"); }),
            "m.jsonl:1: hash_ids: 2 blocks of 512 tokens do not cover input_length 1100 (expected 3)");
  EXPECT_EQ(error_of([] { mooncake(R"({"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": ["a"]})"); }),
            "m.jsonl:1: hash_ids: \"a\" is not a block hash (a whole number of at least 0)");
}

TEST(Trace, AzureCsvReadsDatesAndSkipsRowsWithoutTokens) {
  std::istringstream in(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.1000000,0,12\r\n"
      "2023-11-16 18:16:01.0000000,1200,3\r\n");
  const auto t = parse_azure(in, "a.csv");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.rows_skipped, 1u);
  EXPECT_NEAR(t.requests[1].arrival_s - t.requests[0].arrival_s, 14.31941, 1e-6);
  EXPECT_EQ(t.requests[0].input_tokens, 374);
  EXPECT_EQ(t.requests[1].output_tokens, 3);
  // Across midnight and a month's end, the seconds still add up.
  std::istringstream late("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-29 23:59:59,5,5\n2024-03-01 00:00:01.5,5,5\n");
  const auto l = parse_azure(late, "a.csv");
  EXPECT_NEAR(l.requests[1].arrival_s - l.requests[0].arrival_s, 2.5, 1e-9);
  std::istringstream bad("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 18:15:46,5,5\n");
  EXPECT_EQ(error_of([&] { parse_azure(bad, "a.csv"); }),
            "a.csv:2: TIMESTAMP: '2023-13-16 18:15:46' is not a date and time (YYYY-MM-DD HH:MM:SS[.fraction])");
  std::istringstream missing("TIMESTAMP,Tokens\n");
  EXPECT_EQ(error_of([&] { parse_azure(missing, "a.csv"); }),
            "a.csv: the header has no column 'ContextTokens' (the azure format's header has it)");
}

TEST(Trace, BurstGptCsvTakesItsColumnsByName) {
  std::istringstream in(
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n"
      "45,GPT-4,1087,0,1087,API log\n"
      "\"47.5\",\"ChatGPT\",\"20\",\"300\",\"320\",\"Conversation log\"\n");
  const auto t = parse_burstgpt(in, "b.csv");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.rows_skipped, 1u);  // a failed request: no response tokens
  EXPECT_DOUBLE_EQ(t.requests[1].arrival_s, 47.5);
  EXPECT_EQ(t.requests[1].output_tokens, 300);
  std::istringstream bad("Timestamp,Model,Request tokens,Response tokens\n5,ChatGPT,many,3\n");
  EXPECT_EQ(error_of([&] { parse_burstgpt(bad, "b.csv"); }), "b.csv:2: Request tokens: 'many' is not a number");
  std::istringstream short_row("Timestamp,Model,Request tokens,Response tokens\n5,ChatGPT\n");
  EXPECT_EQ(error_of([&] { parse_burstgpt(short_row, "b.csv"); }), "b.csv:2: 2 fields, the header names 4");
}

TEST(Trace, FormatIsToldFromTheFileAndTheTraceIsSortedCutAndStartsAtZero) {
  const auto m = written("m.jsonl",
                         "{\"timestamp\": 900, \"input_length\": 4, \"output_length\": 2}\n"
                         "{\"timestamp\": 300, \"input_length\": 5, \"output_length\": 2}\n"
                         "{\"timestamp\": 600, \"input_length\": 6, \"output_length\": 2}\n");
  const auto trace = load_trace({m.string(), std::nullopt, 1.0, 2});
  EXPECT_EQ(trace->format, TraceFormat::kMooncake);
  ASSERT_EQ(trace->requests.size(), 2u);  // the first two by arrival
  EXPECT_EQ(trace->requests[0].input_tokens, 5);
  EXPECT_DOUBLE_EQ(trace->requests[0].arrival_s, 0.0);
  EXPECT_DOUBLE_EQ(trace->requests[1].arrival_s, 0.3);
  EXPECT_EQ(replay_arrivals_ns(*trace, 3.0), (std::vector<std::int64_t>{0, 100'000'000}));
  const auto a = written("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,5\n");
  EXPECT_EQ(load_trace({a.string(), std::nullopt, 1.0, 0})->format, TraceFormat::kAzure);
  const auto b = written("b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,x,5,5,10,y\n");
  EXPECT_EQ(load_trace({b.string(), std::nullopt, 1.0, 0})->format, TraceFormat::kBurstGpt);
  const auto other = written("o.csv", "time,in,out\n1,2,3\n");
  EXPECT_NE(error_of([&] {
              load_trace({other.string(), std::nullopt, 1.0, 0});
            }).find("name it with --trace-format"),
            std::string::npos);
  const auto empty = written("e.csv", "Timestamp,Model,Request tokens,Response tokens\n1,x,5,0\n");
  EXPECT_EQ(error_of([&] {
              load_trace({empty.string(), std::nullopt, 1.0, 0});
            }),
            empty.string() + ": no requests with input and output tokens (1 rows had none)");
  EXPECT_EQ(error_of([] {
              load_trace({"/nonexistent/t.jsonl", std::nullopt, 1.0, 0});
            }),
            "--trace /nonexistent/t.jsonl: no such file");
  for (const auto& f : {m, a, b, other, empty}) std::filesystem::remove(f);
}

TEST(Trace, SummaryRoundTripsThroughJson) {
  const auto t = mooncake(R"({"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [3]})");
  auto s = summarize(t, 1.0);
  s.requests_shortened = 1;
  const auto back = trace_summary_from(to_json(s), "trace");
  EXPECT_EQ(to_json(back), to_json(s));
  EXPECT_THROW(trace_summary_from(nlohmann::json{{"file", "x"}}, "trace"), Error);
}

// Four samples; the replay must hand query k sample k (mod 4), not a drawn one.
class FourSamples final : public SampleLibrary {
 public:
  std::uint32_t sample_count() const override { return 4; }
};

TEST(Trace, OpenLoopIssuesRecordedArrivalsInOrderWithTheirOwnSamples) {
  FourSamples library;
  testing::FakeSystem system(2, 0us);
  system.library_ = &library;
  OpenLoopConfig config;
  config.recorded_arrivals_ns = {0, 20'000'000, 20'000'000, 60'000'000, 150'000'000, 151'000'000};
  config.schedule = {RateSegment{0.2, 30}};
  config.lanes = 2;
  const auto start = mono_now_ns();
  const auto phase = run_open_loop(system, config);
  EXPECT_EQ(phase.issued, 6u);
  EXPECT_EQ(phase.recorder.completed(), 6u);
  std::map<std::uint64_t, std::uint32_t> samples;
  for (const auto& q : system.queries) samples[q.id] = q.sample;
  ASSERT_EQ(samples.size(), 6u);
  for (const auto& [id, sample] : samples) EXPECT_EQ(sample, id % 4) << id;
  // No query leaves before its recorded time.
  std::vector<std::int64_t> issued = system.issue_times_ns;
  std::sort(issued.begin(), issued.end());
  for (std::size_t k = 0; k < issued.size(); ++k) EXPECT_GE(issued[k] - start, config.recorded_arrivals_ns[k]) << k;
  EXPECT_GE(phase.duration_s, 0.151);
}

TEST(Trace, RecordedArrivalsMustBeInOrderAndWithinTheSchedule) {
  testing::FakeSystem system(1, 0us);
  OpenLoopConfig config;
  config.schedule = {RateSegment{0.1, 10}};
  config.recorded_arrivals_ns = {5, 3};
  EXPECT_THROW(run_open_loop(system, config), Error);
  config.recorded_arrivals_ns = {0, 100'000'000};
  EXPECT_THROW(run_open_loop(system, config), Error);
}

TEST(Trace, ReplayAndTraceGoTogether) {
  ScenarioSpec spec;
  spec.name = Scenario::kReplay;
  EXPECT_EQ(error_of([&] { validate(spec); }), "--scenario replay and --trace FILE go together");
  spec.name = Scenario::kServer;
  spec.qps = 5;
  spec.trace.file = "t.jsonl";
  EXPECT_EQ(error_of([&] { validate(spec); }), "--scenario replay and --trace FILE go together");
  spec.name = Scenario::kReplay;
  EXPECT_TRUE(is_open_loop(spec));
  spec.shared_prefix = {2, 8};
  EXPECT_NE(error_of([&] { validate(spec); }).find("--shared-prefix: a replayed trace brings its own prompts"),
            std::string::npos);
}

}  // namespace
}  // namespace infermark::loadgen

// Recorded LLM traffic replayed as it arrived: each request's arrival time and its input and output
// lengths, read from the public trace formats (docs/methodology.md, "Trace replay", gives each
// format's source). The load generator issues the k-th request at its recorded time (or scaled by
// --trace-speed); the sample libraries build the k-th prompt to its recorded lengths, and where a
// trace records prefix blocks (Mooncake's hash_ids), requests naming the same block get the same
// tokens there, so a prefix cache sees the reuse the trace recorded.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace infermark::loadgen {

enum class TraceFormat {
  kMooncake,  // JSONL: timestamp (ms), input_length, output_length, hash_ids (512-token blocks)
  kAzure,     // Azure LLM inference trace CSV: TIMESTAMP (date and time), ContextTokens, GeneratedTokens
  kBurstGpt,  // BurstGPT CSV: Timestamp (s), Model, Request tokens, Response tokens, Total tokens, Log Type
};
std::string_view name_of(TraceFormat format);
std::vector<std::pair<std::string, TraceFormat>> trace_format_names();
// "auto" (or "") gives none: the format is told from the file. Throws infermark::Error naming `flag`.
std::optional<TraceFormat> parse_trace_format(const std::string& text, const std::string& flag = "--trace-format");

// What the user asked to replay (part of the scenario, so a cell's worker reads the same file).
struct TraceReplay {
  std::string file;                   // empty: no trace
  std::optional<TraceFormat> format;  // none: told from the file's extension and header
  double speed = 1.0;                 // 2: arrivals twice as close together as recorded
  std::uint64_t max_requests = 0;     // the first N requests of the trace; 0: all
  bool enabled() const { return !file.empty(); }
};

struct TraceRequest {
  double arrival_s = 0;               // since the trace's first request, as recorded
  int input_tokens = 0;               // prompt length
  int output_tokens = 0;              // tokens generated
  std::vector<std::uint64_t> blocks;  // Mooncake: the prompt's blocks, by hash, first block first
};

struct Trace {
  TraceFormat format = TraceFormat::kMooncake;
  std::string file;
  int block_tokens = 0;                // tokens per hashed block (Mooncake's 512); 0 where none are recorded
  std::vector<TraceRequest> requests;  // in arrival order, the first at 0 s
  std::uint64_t rows_skipped = 0;      // rows without input or output tokens (failed requests in BurstGPT)
};

// What a result keeps of the replayed trace ("scenario.parameters.trace").
struct TraceSummary {
  std::string file;
  TraceFormat format = TraceFormat::kMooncake;
  std::uint64_t requests = 0;
  std::uint64_t rows_skipped = 0;
  double recorded_span_s = 0;  // first to last arrival, as recorded
  double speed = 1.0;
  double replayed_span_s = 0;  // recorded span / speed
  double mean_rate_rps = 0;    // requests over the replayed span
  double mean_input_tokens = 0, mean_output_tokens = 0;
  int max_input_tokens = 0, max_output_tokens = 0;
  int block_tokens = 0;
  // Of the trace's prompt blocks, the share that repeat a block an earlier request had: what a
  // prefix cache that never evicts could reuse (Mooncake only).
  std::optional<double> block_reuse_share;
  std::uint64_t requests_shortened = 0;  // in-process engines: requests cut to fit the context
};
nlohmann::json to_json(const TraceSummary& summary);
// Throws infermark::Error naming `where` and the field.
TraceSummary trace_summary_from(const nlohmann::json& j, const std::string& where);
TraceSummary summarize(const Trace& trace, double speed);

// Parses one format from a stream; `file` names it in errors ("FILE:LINE: field: cause").
Trace parse_mooncake(std::istream& in, const std::string& file);
Trace parse_azure(std::istream& in, const std::string& file);
Trace parse_burstgpt(std::istream& in, const std::string& file);

// Reads the trace `replay` names (format told from the file when not given), keeps its first
// max_requests, and sorts it by arrival (stable: recorded order among equal times). Throws
// infermark::Error naming the file, the line and the field. Read once per process and shared:
// the scenario's schedule and the sample library come from the same copy.
std::shared_ptr<const Trace> load_trace(const TraceReplay& replay);

// The k-th request's arrival in ns from the start, scaled by `speed`.
std::vector<std::int64_t> replay_arrivals_ns(const Trace& trace, double speed);

// The tokens a prompt block holds: the same block hash gives the same draws (a stream of its
// own, seeded from `seed` and the hash), so requests sharing a block share its tokens.
std::uint64_t block_stream_seed(std::uint64_t seed, std::uint64_t block_hash);
// The stream of the tokens a request has beyond its recorded blocks (or all of them, without).
std::uint64_t request_stream_seed(std::uint64_t seed, std::uint64_t request_index);

// Requests grouped by their first recorded block (Mooncake's hash_ids): a group's prompts start
// with the same block of tokens, which a prefix cache can reuse, so a request is *warm* when one of
// its group was issued before it, as in a shared-prefix workload. One entry per request (none
// without blocks), numbered in order of first appearance.
struct FirstBlockGroups {
  std::vector<std::optional<std::uint32_t>> of_request;
  std::uint32_t groups = 0;
};
FirstBlockGroups first_block_groups(const Trace& trace);

}  // namespace infermark::loadgen

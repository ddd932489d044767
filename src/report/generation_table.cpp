#include "report/generation_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "core/markdown_table.hpp"
#include "report/comparison_table.hpp"
#include "report/field_guides.hpp"
#include "report/percentile_claims.hpp"
#include "report/perplexity_loss.hpp"

namespace infermark::report {
namespace {

const std::vector<MarkdownColumn> kColumns{
    {"backend", false},      {"model", false},          {"threads", true},      {"C", true},
    {"prompt+output", true}, {"load s", true},          {"req/s", true},        {"P50 ms", true},
    {"P99 ms", true},        {"TTFT P50 ms", true},     {"TTFT P99 ms", true},  {"TPOT ms", true},
    {"ITL P99 ms", true},    {"prefill tok/s", true},   {"decode tok/s", true}, {"output tok/s", true},
    {"peak RSS GB", true},   {"GB per B params", true}, {"status", false}};

// A percentile (or the mean) of one of the generation summaries, or "-".
std::string percentile(const std::optional<stats::LatencySummary>& summary, double p) {
  return summary ? format_number(summary->at(p).value) : "-";
}

std::string mean_of(const std::optional<stats::LatencySummary>& summary) { return summary ? format_number(summary->mean) : "-"; }

std::string lengths(const result::RunResult& r) {
  const loadgen::ScenarioSpec none{.prompt_tokens = 0,
                                   .prompt_tokens_stddev = 0,
                                   .output_tokens = 0,
                                   .output_tokens_stddev = 0,
                                   .shared_prefix = {},
                                   .trace = {},
                                   .conversation = {},
                                   .dataset = {}};
  const auto& request = r.scenario.parameters.request ? *r.scenario.parameters.request : none;
  if (const auto& trace = r.scenario.parameters.trace)  // a replay's lengths vary per request: the trace's means
    return fmt::format("trace ~{:.0f}+{:.0f}", trace->mean_input_tokens, trace->mean_output_tokens);
  auto length = [](double m, double s) { return s > 0 ? fmt::format("{:g}±{:g}", m, s) : fmt::format("{:g}", m); };
  const auto& shared = request.shared_prefix;
  if (request.conversation.enabled())  // each turn a new message after the history
    return fmt::format("{} turns x ", request.conversation.turns) + length(request.prompt_tokens, request.prompt_tokens_stddev) +
           "+" + length(request.output_tokens, request.output_tokens_stddev);
  return (shared.enabled() ? fmt::format("{}x{}+", shared.groups, shared.tokens) : std::string()) +
         length(request.prompt_tokens, request.prompt_tokens_stddev) + "+" +
         length(request.output_tokens, request.output_tokens_stddev);
}

std::vector<std::string> row_for(const result::RunResult& r) {
  std::vector<std::string> row{
      r.backend.name,
      r.model.name,
      threads_cell(r),
      std::to_string(r.generation ? r.generation->concurrency : 1),  // sequences decoded together (single-stream: 1)
      lengths(r),
      r.timing.load_ms > 0 ? format_number(r.timing.load_ms / 1000) : "-"};
  if (r.generation && r.latency_ms) {
    const auto& g = *r.generation;
    row.push_back(format_number(g.requests_per_s));
    row.push_back(format_number(r.latency_ms->at(50).value));
    row.push_back(format_number(r.latency_ms->at(99).value));
    row.push_back(percentile(g.ttft_ms, 50));
    row.push_back(percentile(g.ttft_ms, 99));
    row.push_back(mean_of(g.tpot_ms));
    row.push_back(percentile(g.itl_ms, 99));
    row.push_back(format_number(g.prefill_tokens_per_s));
    row.push_back(format_number(g.decode_tokens_per_s));
    row.push_back(format_number(g.output_tokens_per_s));
  } else {
    row.insert(row.end(), 10, "-");
  }
  row.push_back(r.memory.peak_rss_mb > 0 ? fmt::format("{:.2f}", r.memory.peak_rss_mb / 1024) : "-");
  const auto per_billion = gb_per_billion_parameters(r);
  row.push_back(per_billion ? fmt::format("{:.2f}", *per_billion) : "-");
  row.push_back(std::string(name_of(r.status)));
  return row;
}

}  // namespace

bool is_generation_result(const result::RunResult& result) { return result.generation.has_value(); }

std::optional<double> model_parameters(const result::RunResult& result) {
  const auto text = effective_setting(result, "parameters");
  char* end = nullptr;
  const double count = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(count > 0)) return std::nullopt;
  return count;
}

std::optional<double> gb_per_billion_parameters(const result::RunResult& result) {
  const auto parameters = model_parameters(result);
  if (!parameters || result.memory.peak_rss_mb <= 0) return std::nullopt;
  return (result.memory.peak_rss_mb / 1024) / (*parameters / 1e9);
}

bool has_perplexity(const result::RunResult& r) { return r.generation && r.generation->perplexity; }

// With --perplexity-text: an agreement column before the status: each result's greedy continuations
// against those of the first result that has them (the reference), on the same prompts only.
std::string agreement_note(const std::vector<result::RunResult>& results, std::vector<MarkdownColumn>& columns,
                           std::vector<std::vector<std::string>>& rows) {
  const auto continued = [](const result::RunResult& r) {
    return has_perplexity(r) && !r.generation->perplexity->continuations.empty();
  };
  const auto reference = std::find_if(results.begin(), results.end(), continued);
  if (reference == results.end()) return "";
  const auto& base = *reference->generation->perplexity;
  columns.insert(columns.end() - 1, {"greedy agree", true});
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::string cell = "-";
    if (&results[i] == &*reference) {
      cell = "(reference)";
    } else if (continued(results[i])) {
      const auto agreement = result::greedy_agreement(*results[i].generation->perplexity, base);
      cell = !agreement ? "other prompts"
             : agreement->first_divergence < 0
                 ? fmt::format("{:.1f}%", 100 * agreement->identical_share)
                 : fmt::format("{:.1f}% (from {})", 100 * agreement->identical_share, agreement->first_divergence);
      if (agreement && agreement->continuations < static_cast<int>(base.continuations.size()))
        cell += fmt::format(" [{} of {}]", agreement->continuations, base.continuations.size());
    }
    rows[i].insert(rows[i].end() - 1, cell);
  }
  return fmt::format(
      "  greedy agree: tokens equal to {} ({})'s, position by position, over {} greedy continuations of {} tokens from the "
      "perplexity text; (from N): the earliest position where one differs; [k of n]: only k prompts were cut into the same "
      "tokens by both tokenizers, and only those are compared\n",
      reference->model.name, reference->backend.name, base.continuations.size(), base.continuation_tokens);
}

// "+25.8% (large)": the perplexity above the family's higher-precision cell (report/perplexity_loss).
std::string perplexity_loss_cell(const std::optional<PerplexityLoss>& loss) {
  if (!loss) return "-";
  if (loss->is_reference) return "(reference)";
  return fmt::format("{:+.1f}%{}{}", loss->increase() * 100, loss->other_engine ? " vs " + loss->reference_label : "",
                     loss->increase() > kLargePerplexityIncrease ? " (large)" : "");
}

// With --perplexity-text: perplexity and its increase over the model family's higher-precision cell
// before the status, and a note on the text it was measured on.
std::string perplexity_note(const std::vector<result::RunResult>& results, std::vector<MarkdownColumn>& columns,
                            std::vector<std::vector<std::string>>& rows) {
  if (std::none_of(results.begin(), results.end(), has_perplexity)) return "";
  columns.insert(columns.end() - 1, {"perplexity", true});
  columns.insert(columns.end() - 1, {"ppl vs higher precision", true});
  std::vector<const result::RunResult*> runs;
  for (const auto& r : results) runs.push_back(&r);
  const auto losses = perplexity_losses(runs);
  std::string note;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& p = has_perplexity(results[i]) ? results[i].generation->perplexity : std::nullopt;
    rows[i].insert(rows[i].end() - 1, p ? fmt::format("{:.3f}", p->perplexity) : "-");
    rows[i].insert(rows[i].end() - 1, perplexity_loss_cell(losses[i]));
    if (p)
      note += fmt::format("  perplexity of {}: {} tokens of {} scored, windows of {} (second half scored), {:.1f} s\n",
                          results[i].model.name, p->tokens_scored, p->source, p->window, p->wall_s);
  }
  note += fmt::format(
      "  ppl vs higher precision: perplexity above the same model's FP32 (or as exported), else FP16, cell of the same "
      "engine on the same text (another engine's where named); (large): more than {:.0f}% above\n",
      kLargePerplexityIncrease * 100);
  return note + agreement_note(results, columns, rows);
}

bool has_shared_prefix(const result::RunResult& r) { return r.generation && r.generation->shared_prefix; }

// With --shared-prefix: the share of requests whose prefix was warm and TTFT apart for warm and
// cold ones, before the status, and a note saying what warm means.
std::string shared_prefix_note(const std::vector<result::RunResult>& results, std::vector<MarkdownColumn>& columns,
                               std::vector<std::vector<std::string>>& rows) {
  if (std::none_of(results.begin(), results.end(), has_shared_prefix)) return "";
  columns.insert(columns.end() - 1, {"warm prefix", true});
  columns.insert(columns.end() - 1, {"TTFT P50 warm/cold ms", true});
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& p = results[i].generation ? results[i].generation->shared_prefix : std::nullopt;
    rows[i].insert(rows[i].end() - 1, p ? fmt::format("{:.0f}%", 100 * p->split.warm_share()) : "-");
    rows[i].insert(rows[i].end() - 1,
                   p ? percentile(p->split.ttft_warm_ms, 50) + " / " + percentile(p->split.ttft_cold_ms, 50) : "-");
  }
  return "  GxP+ (prompt+output): G groups of prompts, each starting with its group's shared prefix of P tokens (words for "
         "`load`) before its own prompt; warm prefix: the share of requests whose prefix had been sent before them (warm-up "
         "included), whether or not the engine kept it; TTFT P50 warm/cold: of those requests and of the first of each "
         "prefix (a replayed trace's requests are grouped by their first recorded block). An engine that caches prefixes "
         "answers warm requests sooner; one that does not shows both alike.\n";
}

// Where requests fell in several latency groups (a conversation's turns): each group's TTFT and
// mean prompt length, so a reader sees what the growing history costs.
std::string group_note(const std::vector<result::RunResult>& results) {
  std::string note;
  for (const auto& r : results) {
    if (!r.generation || r.generation->by_group.empty()) continue;
    note += fmt::format("  TTFT P50 ms (mean prompt tokens) per group, {} {} C={}:", r.backend.name, r.model.name,
                        r.generation->concurrency);
    for (const auto& group : r.generation->by_group)
      note += fmt::format(" {} {} ({:.0f});", group.label, percentile(group.ttft_ms, 50), group.prompt_tokens_mean);
    note.back() = '\n';
  }
  if (!note.empty())
    note +=
        "  N turns x M+O: conversations of N turns, each turn's prompt the history so far (earlier messages and answers) "
        "plus a new message of M tokens, answered with O; a user thinks between turns (not timed).\n";
  return note;
}

// `load` cells: what counted their output tokens (the served model's tokenizer, the server's usage
// or the streamed pieces), and where the tokenizer and the server both counted, the two totals.
std::string token_count_note(const std::vector<result::RunResult>& results) {
  std::string note;
  for (const auto& r : results) {
    if (!r.remote || !r.remote->token_counts) continue;
    const auto& c = *r.remote->token_counts;
    note += fmt::format("  output tokens of {} C={} counted by", r.model.name, r.generation ? r.generation->concurrency : 0);
    if (!c.tokenizer.empty()) {
      note += fmt::format(" the {} ({} requests)", c.tokenizer, c.from_tokenizer);
      if (c.server_usage_tokens > 0)
        note +=
            fmt::format("; on those the server's usage said {} tokens, the tokenizer {} ({:.3f}x)", c.server_usage_tokens,
                        c.tokenizer_tokens, static_cast<double>(c.tokenizer_tokens) / static_cast<double>(c.server_usage_tokens));
    } else {
      if (c.from_server_usage > 0) note += fmt::format(" the server's usage ({} requests)", c.from_server_usage);
      if (c.from_server_usage > 0 && c.from_counted_stream_pieces > 0) note += " and";
      if (c.from_counted_stream_pieces > 0)
        note += fmt::format(" one token per streamed piece ({} requests: no usage sent)", c.from_counted_stream_pieces);
      if (c.from_server_usage + c.from_counted_stream_pieces == 0) note += " nothing (no request completed)";
    }
    note += "\n";
  }
  return note;
}

std::string generation_table(const std::vector<result::RunResult>& results) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) rows.push_back(row_for(r));
  auto columns = kColumns;
  const auto perplexity = perplexity_note(results, columns, rows);
  const auto prefix = shared_prefix_note(results, columns, rows);
  std::string table = markdown_table(columns, rows) + percentile_claim_note(results) + perplexity + prefix + group_note(results) +
                      token_count_note(results);
  for (const auto& r : results)
    if (!r.error.empty()) table += fmt::format("  {}\n", r.error);
  table +=
      "  TTFT: issue (closed loop) or scheduled arrival (open loop) to first token; TPOT: mean time per output token after the "
      "first;\n"
      "  ITL: gap between consecutive tokens; decode tok/s per sequence; output tok/s for the whole batch.\n"
      "  GB per B params: peak RSS over the parameter count the backend recorded (baseline of " +
      markdown_citation(FieldGuide::kPerformanceTesting) + ": 1.2).\n";
  return table;
}

}  // namespace infermark::report

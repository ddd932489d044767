#include "result/measured_phases.hpp"

#include <stdexcept>

#include "core/error.hpp"
#include "result/record_fields.hpp"

namespace infermark::result {
namespace {

using detail::Fields;
using detail::optional_json;
using detail::put;
using nlohmann::json;

json to_json(const std::optional<TokenLatency>& t) {
  if (!t) return nullptr;
  return {{"mean", t->mean}, {"p50", t->p50}, {"p90", t->p90}, {"p99", t->p99}, {"max", t->max}};
}

std::optional<TokenLatency> token_latency_from(const Fields& f, const char* key) {
  if (!f.find(key)) return std::nullopt;
  const auto t = f.object(key);
  return TokenLatency{t.get<double>("mean"), t.get<double>("p50"), t.get<double>("p90"), t.get<double>("p99"),
                      t.get<double>("max")};
}

json to_json(const GenerationPhase& g) {
  return {{"requests", g.requests},
          {"prompt_tokens", g.prompt_tokens},
          {"output_tokens", g.output_tokens},
          {"ttft_ms", to_json(g.ttft_ms)},
          {"tpot_ms", to_json(g.tpot_ms)},
          {"itl_ms", to_json(g.itl_ms)},
          {"e2e_ms", to_json(g.e2e_ms)},
          {"output_tokens_per_s", g.output_tokens_per_s},
          {"requests_per_s", g.requests_per_s}};
}

GenerationPhase generation_from(const Fields& f) {
  GenerationPhase g;
  g.requests = f.get<std::uint64_t>("requests");
  g.prompt_tokens = f.get<std::int64_t>("prompt_tokens");
  g.output_tokens = f.get<std::int64_t>("output_tokens");
  g.ttft_ms = token_latency_from(f, "ttft_ms");
  g.tpot_ms = token_latency_from(f, "tpot_ms");
  g.itl_ms = token_latency_from(f, "itl_ms");
  g.e2e_ms = token_latency_from(f, "e2e_ms");
  g.output_tokens_per_s = f.get<double>("output_tokens_per_s");
  g.requests_per_s = f.get<double>("requests_per_s");
  return g;
}

json to_json(const GroupLatency& g) {
  json row{{"group", g.group}, {"queries", g.queries}};
  put(row, "p50", g.p50);
  put(row, "p90", g.p90);
  put(row, "p99", g.p99);
  put(row, "mean", g.mean);
  return row;
}

GroupLatency group_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  return {f.get<std::string>("group"), f.get<std::uint64_t>("queries"), f.optional<double>("p50"),
          f.optional<double>("p90"),   f.optional<double>("p99"),       f.optional<double>("mean")};
}

}  // namespace

json to_json(const PhaseRecord& p) {
  json j{{"label", p.label},
         {"concurrency", p.concurrency},
         {"issued", p.issued},
         {"completed", p.completed},
         {"errors", p.errors},
         {"rejected", p.rejected},
         {"duration_s", p.duration_s},
         {"achieved_qps", p.achieved_qps},
         {"minimums_met", p.minimums_met},
         {"interrupted", p.interrupted},
         {"target_qps", optional_json(p.target_qps)},
         {"good_queries", p.good_queries},
         {"goodput_qps", p.goodput_qps}};
  j["latency_ms"] = p.latency_ms ? json{{"p50", p.latency_ms->p50},
                                        {"p90", p.latency_ms->p90},
                                        {"p99", p.latency_ms->p99},
                                        {"max", p.latency_ms->max},
                                        {"mean", p.latency_ms->mean}}
                                 : json(nullptr);
  put(j, "waited_for_lane", p.waited_for_lane);
  j["issue_lateness_us"] =
      p.issue_lateness_us
          ? json{{"p50", p.issue_lateness_us->p50}, {"p99", p.issue_lateness_us->p99}, {"max", p.issue_lateness_us->max}}
          : json(nullptr);
  if (p.latency_by_group_ms) {
    j["latency_by_group_ms"] = json::array();
    for (const auto& g : *p.latency_by_group_ms) j["latency_by_group_ms"].push_back(to_json(g));
  }
  if (p.generation) j["generation"] = to_json(*p.generation);
  return j;
}

PhaseRecord phase_record_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  PhaseRecord p;
  p.label = f.get<std::string>("label");
  p.concurrency = f.get<int>("concurrency");
  p.issued = f.get<std::uint64_t>("issued");
  p.completed = f.get<std::uint64_t>("completed");
  p.errors = f.get<std::uint64_t>("errors");
  p.rejected = f.get<std::uint64_t>("rejected");
  p.duration_s = f.get<double>("duration_s");
  p.achieved_qps = f.get<double>("achieved_qps");
  p.minimums_met = f.get<bool>("minimums_met", true);
  p.interrupted = f.get<bool>("interrupted");
  p.target_qps = f.optional<double>("target_qps");
  if (f.find("latency_ms")) {
    const auto l = f.object("latency_ms");
    p.latency_ms = PhaseLatency{l.get<double>("p50"), l.get<double>("p90"), l.get<double>("p99"), l.get<double>("max"),
                                l.get<double>("mean")};
  }
  p.waited_for_lane = f.optional<std::uint64_t>("waited_for_lane");
  if (f.find("issue_lateness_us")) {
    const auto l = f.object("issue_lateness_us");
    p.issue_lateness_us = IssueLateness{l.get<double>("p50"), l.get<double>("p99"), l.get<double>("max")};
  }
  if (f.find("latency_by_group_ms")) p.latency_by_group_ms = f.list("latency_by_group_ms", group_from);
  if (f.find("generation")) p.generation = generation_from(f.object("generation"));
  p.good_queries = f.get<std::uint64_t>("good_queries");
  p.goodput_qps = f.get<double>("goodput_qps");
  return p;
}

json to_json(const std::vector<IntervalRecord>& series) {
  json rows = json::array();
  for (const auto& r : series)
    rows.push_back({{"t_s", r.t_s},
                    {"completed", r.completed},
                    {"errors", r.errors},
                    {"throughput_per_s", r.throughput_per_s},
                    {"p50_ms", optional_json(r.p50_ms)},
                    {"p99_ms", optional_json(r.p99_ms)},
                    {"max_ms", optional_json(r.max_ms)}});
  return rows;
}

std::vector<IntervalRecord> time_series_from(const json& j, const std::string& where) {
  if (j.is_null()) return {};
  if (!j.is_array()) detail::mistyped(where, "a list", j);
  std::vector<IntervalRecord> series;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Fields f(j[i], where + "[" + std::to_string(i) + "]");
    series.push_back({f.get<double>("t_s"), f.get<std::uint64_t>("completed"), f.get<std::uint64_t>("errors"),
                      f.get<double>("throughput_per_s"), f.optional<double>("p50_ms"), f.optional<double>("p99_ms"),
                      f.optional<double>("max_ms")});
  }
  return series;
}

stats::LatencyHistogram latency_histogram_from(const json& j, const std::string& where) {
  try {
    return stats::LatencyHistogram::from_json(j);
  } catch (const std::invalid_argument& e) {
    throw Error(where + ": " + e.what());
  }
}

}  // namespace infermark::result

#include "result/result_sections.hpp"

#include "core/error.hpp"
#include "result/record_fields.hpp"

namespace infermark::result {
namespace {

using detail::Fields;
using detail::optional_json;
using nlohmann::json;

// ---- pipeline ----

json to_json(const std::optional<BriefLatency>& s) {
  if (!s) return nullptr;
  return {{"count", s->count}, {"mean", s->mean}, {"p50", s->p50}, {"p99", s->p99}, {"max", s->max}};
}

std::optional<BriefLatency> brief_latency_from(const Fields& parent, const char* key) {
  if (!parent.find(key)) return std::nullopt;
  const auto f = parent.object(key);
  return BriefLatency{f.get<std::uint64_t>("count"), f.get<double>("mean"), f.get<double>("p50"), f.get<double>("p99"),
                      f.get<double>("max")};
}

const char* const kStageCounts[] = {"processed", "dropped_here", "service_ms", "inference_ms", "queue_wait_ms"};

json to_json(const PipelineStageRecord& s) {
  json j = s.description;
  j["processed"] = s.processed;
  j["dropped_here"] = s.dropped_here;
  j["service_ms"] = to_json(s.service_ms);
  j["inference_ms"] = to_json(s.inference_ms);
  j["queue_wait_ms"] = to_json(s.queue_wait_ms);
  return j;
}

PipelineStageRecord stage_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  PipelineStageRecord s;
  s.description = j;
  for (const auto* key : kStageCounts) s.description.erase(key);
  s.processed = f.get<std::uint64_t>("processed");
  s.dropped_here = f.get<std::uint64_t>("dropped_here");
  s.service_ms = brief_latency_from(f, "service_ms");
  s.inference_ms = brief_latency_from(f, "inference_ms");
  s.queue_wait_ms = brief_latency_from(f, "queue_wait_ms");
  return s;
}

BreakerRecord breaker_from(const Fields& f) {
  BreakerRecord b;
  b.trip_after = f.get<int>("trip_after");
  b.cooldown_ms = f.get<double>("cooldown_ms");
  b.final_state = parse_breaker_state(f.get<std::string>("final_state"), f.path("final_state"));
  b.times_opened = f.get<std::uint64_t>("times_opened");
  b.rejected = f.get<std::uint64_t>("rejected");
  b.events = f.list("events", [](const json& e, const std::string& where) {
    const Fields event(e, where);
    return BreakerEventRecord{event.get<double>("at_ms"),
                              parse_breaker_state(event.get<std::string>("state"), event.path("state"))};
  });
  return b;
}

// ---- remote ----

json to_json(const PromptSource& p) {
  json j{{"source", p.source}};
  if (p.words) j["words"] = *p.words;
  if (p.count) j["count"] = *p.count;
  return j;
}

RemoteErrorCounts errors_from(const Fields& f) {
  RemoteErrorCounts e;
  e.total = f.get<std::uint64_t>("total");
  e.transport = f.counts("transport");
  e.http_status = f.counts("http_status");
  e.grpc_status = f.counts("grpc_status");
  e.in_stream = f.get<std::uint64_t>("in_stream");
  e.examples = f.texts("examples");
  return e;
}

// ---- scaleout ----

json to_json(const RankRecord& r) {
  json j{{"rank", r.rank}, {"host", r.host}};
  j["share"] = json::object();
  if (r.share_qps) j["share"]["qps"] = *r.share_qps;
  if (r.share_clients) j["share"]["clients"] = *r.share_clients;
  if (r.target_qps) j["target_qps"] = *r.target_qps;
  if (r.waited_for_lane) j["waited_for_lane"] = *r.waited_for_lane;
  j["completed"] = r.completed;
  j["errors"] = r.errors;
  j["rejected"] = r.rejected;
  j["achieved_qps"] = r.achieved_qps;
  j["issue_lateness_us"] =
      r.issue_lateness_us
          ? json{{"p50", r.issue_lateness_us->p50}, {"p99", r.issue_lateness_us->p99}, {"max", r.issue_lateness_us->max}}
          : json(nullptr);
  j["failed"] = r.failed;
  j["fell_behind"] = r.fell_behind;
  if (r.error) j["error"] = *r.error;
  if (!r.behind_because.empty()) j["behind_because"] = r.behind_because;
  if (r.seed) j["seed"] = *r.seed;
  return j;
}

RankRecord rank_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  RankRecord r;
  r.rank = f.get<int>("rank");
  r.host = f.get<std::string>("host");
  const auto share = f.object("share");
  r.share_qps = share.optional<double>("qps");
  r.share_clients = share.optional<int>("clients");
  r.target_qps = f.optional<double>("target_qps");
  r.waited_for_lane = f.optional<std::uint64_t>("waited_for_lane");
  r.completed = f.get<std::uint64_t>("completed");
  r.errors = f.get<std::uint64_t>("errors");
  r.rejected = f.get<std::uint64_t>("rejected");
  r.achieved_qps = f.get<double>("achieved_qps");
  if (f.find("issue_lateness_us")) {
    const auto l = f.object("issue_lateness_us");
    r.issue_lateness_us = IssueLateness{l.get<double>("p50"), l.get<double>("p99"), l.get<double>("max")};
  }
  r.failed = f.get<bool>("failed");
  r.fell_behind = f.get<bool>("fell_behind");
  r.error = f.optional<std::string>("error");
  r.behind_because = f.texts("behind_because");
  if (j.contains("seed")) r.seed = j["seed"];  // null included: the rank recorded no seed
  return r;
}

}  // namespace

json to_json(const BreakerRecord& b) {
  json events = json::array();
  for (const auto& e : b.events) events.push_back({{"at_ms", e.at_ms}, {"state", name_of(e.state)}});
  return {{"trip_after", b.trip_after},     {"cooldown_ms", b.cooldown_ms}, {"final_state", name_of(b.final_state)},
          {"times_opened", b.times_opened}, {"rejected", b.rejected},       {"events", events}};
}

BreakerRecord breaker_record_from(const json& j, const std::string& where) { return breaker_from(Fields(j, where)); }

BreakerRecord breaker_record_of(const CircuitBreaker& breaker, std::int64_t origin_ns) {
  BreakerRecord b;
  b.trip_after = breaker.settings().trip_after;
  b.cooldown_ms = breaker.settings().cooldown_ms;
  b.final_state = breaker.state();
  b.times_opened = static_cast<std::uint64_t>(breaker.times_opened());
  b.rejected = static_cast<std::uint64_t>(breaker.rejected());
  for (const auto& e : breaker.events()) b.events.push_back({static_cast<double>(e.at_ns - origin_ns) * 1e-6, e.state});
  return b;
}

json to_json(const TextCheckRecord& t) {
  json samples = json::array();
  for (const auto& s : t.samples)
    samples.push_back({{"sample", s.sample}, {"expected", s.expected}, {"recognised", s.recognised}});
  return {{"labels", t.labels},
          {"characters", t.characters},
          {"requests", t.requests},
          {"lines_expected", t.lines_expected},
          {"lines_recognised", t.lines_recognised},
          {"lines_exact", t.lines_exact},
          {"characters_expected", t.characters_expected},
          {"character_errors", t.character_errors},
          {"line_accuracy", t.line_accuracy},
          {"character_accuracy", t.character_accuracy},
          {"samples", samples},
          {"error", optional_json(t.error)}};
}

TextCheckRecord text_check_from(const Fields& f) {
  TextCheckRecord t;
  t.labels = f.get<std::string>("labels");
  t.characters = f.get<std::string>("characters");
  t.requests = f.get<std::uint64_t>("requests");
  t.lines_expected = f.get<std::uint64_t>("lines_expected");
  t.lines_recognised = f.get<std::uint64_t>("lines_recognised");
  t.lines_exact = f.get<std::uint64_t>("lines_exact");
  t.characters_expected = f.get<std::uint64_t>("characters_expected");
  t.character_errors = f.get<std::uint64_t>("character_errors");
  t.line_accuracy = f.get<double>("line_accuracy");
  t.character_accuracy = f.get<double>("character_accuracy");
  t.samples = f.list("samples", [](const json& j, const std::string& where) {
    const Fields s(j, where);
    return TextCheckRecord::Sample{s.get<std::uint32_t>("sample"), s.texts("expected"), s.texts("recognised")};
  });
  t.error = f.optional<std::string>("error");
  return t;
}

json to_json(const PipelineRecord& p) {
  json stages = json::array();
  for (const auto& s : p.stages) stages.push_back(to_json(s));
  const auto& r = p.requests;
  return {{"mode", name_of(p.mode)},
          {"stages", stages},
          {"handoff", p.handoff},
          {"transport", p.transport},
          {"queue_depth", p.queue_depth},
          {"requests",
           {{"timed", optional_json(r.timed)},
            {"admitted", r.admitted},
            {"completed", r.completed},
            {"completed_on_time", r.completed_on_time},
            {"completed_late", r.completed_late},
            {"dropped", r.dropped},
            {"rejected_by_breaker", r.rejected_by_breaker}}},
          {"timeout_ms", p.timeout_ms},
          {"in_pipeline_latency_ms", to_json(p.in_pipeline_latency_ms)},
          {"in_pipeline_throughput_qps", p.in_pipeline_throughput_qps},
          {"goodput_qps", p.goodput_qps},
          {"breaker", p.breaker ? to_json(*p.breaker) : json(nullptr)},
          {"prediction",
           {{"from_mode", name_of(p.prediction.from_mode)},
            {"latency_ms", p.prediction.latency_ms},
            {"queries_per_s", p.prediction.queries_per_s},
            {"rule", p.prediction.rule}}},
          {"max_abs_diff_vs_serial", optional_json(p.max_abs_diff_vs_serial)},
          {"text_check", p.text_check ? to_json(*p.text_check) : json(nullptr)}};
}

PipelineRecord pipeline_record_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  PipelineRecord p;
  p.mode = parse_pipeline_mode(f.get<std::string>("mode"), f.path("mode"));
  p.stages = f.list("stages", stage_from);
  p.handoff = f.get<std::string>("handoff");
  p.transport = f.get<std::string>("transport");
  p.queue_depth = f.get<int>("queue_depth");
  const auto r = f.object("requests");
  p.requests = {r.optional<std::uint64_t>("timed"),         r.get<std::uint64_t>("admitted"),
                r.get<std::uint64_t>("completed"),          r.get<std::uint64_t>("completed_on_time"),
                r.get<std::uint64_t>("completed_late"),     r.get<std::uint64_t>("dropped"),
                r.get<std::uint64_t>("rejected_by_breaker")};
  p.timeout_ms = f.get<double>("timeout_ms");
  p.in_pipeline_latency_ms = brief_latency_from(f, "in_pipeline_latency_ms");
  p.in_pipeline_throughput_qps = f.get<double>("in_pipeline_throughput_qps");
  p.goodput_qps = f.get<double>("goodput_qps");
  if (f.find("breaker")) p.breaker = breaker_from(f.object("breaker"));
  const auto prediction = f.object("prediction");
  p.prediction = {parse_pipeline_mode(prediction.get<std::string>("from_mode"), prediction.path("from_mode")),
                  prediction.get<double>("latency_ms"), prediction.get<double>("queries_per_s"),
                  prediction.get<std::string>("rule")};
  p.max_abs_diff_vs_serial = f.optional<double>("max_abs_diff_vs_serial");
  if (f.find("text_check")) p.text_check = text_check_from(f.object("text_check"));
  return p;
}

json to_json(const RemoteErrorCounts& e) {
  return {{"total", e.total},         {"transport", e.transport}, {"http_status", e.http_status}, {"grpc_status", e.grpc_status},
          {"in_stream", e.in_stream}, {"examples", e.examples}};
}

RemoteErrorCounts remote_errors_from(const json& j, const std::string& where) { return errors_from(Fields(j, where)); }

json to_json(const RemoteRecord& r) {
  json j{{"protocol", r.protocol},
         {"url", r.url},
         {"client",
          {{"io_threads", r.client.io_threads}, {"timeout_s", r.client.timeout_s}, {"max_in_flight", r.client.max_in_flight}}}};
  if (r.server) j["server"] = *r.server;
  if (r.model_version) j["model_version"] = *r.model_version;
  if (r.tensors) j["tensors"] = *r.tensors;
  if (r.request) j["request"] = {{"method", r.request->method}, {"body_bytes", r.request->body_bytes}};
  if (r.endpoint) j["endpoint"] = *r.endpoint;
  if (r.stream) j["stream"] = *r.stream;
  if (r.ignore_eos) j["ignore_eos"] = *r.ignore_eos;
  if (r.prompts) j["prompts"] = to_json(*r.prompts);
  if (r.token_counts) j["token_counts"] = to_json(*r.token_counts);
  if (r.errors) j["errors"] = to_json(*r.errors);
  if (r.connections_opened) j["connections_opened"] = *r.connections_opened;
  if (r.scrape) j["scrape"] = *r.scrape;
  return j;
}

json to_json(const TokenCounts& c) {
  json j{{"from_server_usage", c.from_server_usage}, {"from_counted_stream_pieces", c.from_counted_stream_pieces}};
  if (!c.tokenizer.empty())
    j.update({{"from_tokenizer", c.from_tokenizer},
              {"tokenizer", c.tokenizer},
              {"tokenizer_tokens", c.tokenizer_tokens},
              {"server_usage_tokens", c.server_usage_tokens}});
  return j;
}

TokenCounts token_counts_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  TokenCounts c{f.get<std::uint64_t>("from_server_usage"), f.get<std::uint64_t>("from_counted_stream_pieces")};
  if (const auto tokenizer = f.optional<std::string>("tokenizer")) {  // only with --tokenizer
    c.tokenizer = *tokenizer;
    c.from_tokenizer = f.get<std::uint64_t>("from_tokenizer");
    c.tokenizer_tokens = f.get<std::uint64_t>("tokenizer_tokens");
    c.server_usage_tokens = f.get<std::uint64_t>("server_usage_tokens");
  }
  return c;
}

RemoteRecord remote_record_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  RemoteRecord r;
  r.protocol = f.get<std::string>("protocol");
  r.url = f.get<std::string>("url");
  const auto client = f.object("client");
  r.client = {client.get<int>("io_threads"), client.get<double>("timeout_s"), client.get<int>("max_in_flight")};
  if (const auto* server = f.find("server")) {
    if (!server->is_object()) detail::mistyped(f.path("server"), "an object", *server);
    r.server = *server;
  }
  r.model_version = f.optional<std::string>("model_version");
  r.tensors = f.optional<std::string>("tensors");
  if (f.find("request")) {
    const auto request = f.object("request");
    r.request = PlainHttpRequest{request.get<std::string>("method"), request.get<std::uint64_t>("body_bytes")};
  }
  r.endpoint = f.optional<std::string>("endpoint");
  r.stream = f.optional<bool>("stream");
  r.ignore_eos = f.optional<bool>("ignore_eos");
  if (f.find("prompts")) {
    const auto prompts = f.object("prompts");
    r.prompts = PromptSource{prompts.get<std::string>("source"), prompts.optional<std::string>("words"),
                             prompts.optional<std::uint64_t>("count")};
  }
  if (const auto* counts = f.find("token_counts")) r.token_counts = token_counts_from(*counts, f.path("token_counts"));
  if (f.find("errors")) r.errors = errors_from(f.object("errors"));
  r.connections_opened = f.optional<std::uint64_t>("connections_opened");
  r.scrape = f.optional<json>("scrape");
  return r;
}

json to_json(const ScaleoutRecord& s) {
  json rows = json::array();
  for (const auto& r : s.per_rank) rows.push_back(to_json(r));
  json j{
      {"ranks", s.ranks}, {"valid", s.valid}, {"fell_behind_rule", s.fell_behind_rule}, {"merge", s.merge}, {"per_rank", rows}};
  if (s.problems) j["problems"] = *s.problems;
  return j;
}

ScaleoutRecord scaleout_record_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  ScaleoutRecord s;
  s.ranks = f.get<std::uint64_t>("ranks");
  s.valid = f.get<bool>("valid", true);
  s.fell_behind_rule = f.get<std::string>("fell_behind_rule");
  s.merge = f.get<std::string>("merge");
  s.per_rank = f.list("per_rank", rank_from);
  s.problems = f.optional<std::string>("problems");
  return s;
}

}  // namespace infermark::result

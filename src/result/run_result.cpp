#include "result/run_result.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/json_text.hpp"
#include "core/named_enum.hpp"

namespace infermark::result {
namespace {

using nlohmann::json;

json spec_json(const TensorSpec& spec) {
  return {{"name", spec.name}, {"dtype", dtype_name(spec.dtype)}, {"shape", spec.shape}, {"dim_names", spec.dim_names}};
}

TensorSpec spec_from(const json& j) {
  return {j.at("name"), parse_dtype(j.at("dtype").get<std::string>()), integers<std::int64_t>(j.at("shape")),
          j.value("dim_names", std::vector<std::string>{})};
}

json specs_json(const std::vector<TensorSpec>& specs) {
  json out = json::array();
  for (const auto& s : specs) out.push_back(spec_json(s));
  return out;
}

std::vector<TensorSpec> specs_from(const json& j) {
  std::vector<TensorSpec> out;
  for (const auto& s : j) out.push_back(spec_from(s));
  return out;
}

constexpr NamedValue<ResultOrigin> kOrigins[] = {
    {ResultOrigin::kInProcess, "in_process"}, {ResultOrigin::kServed, "served"}, {ResultOrigin::kRemote, "remote"}};

json interval_json(const stats::Interval& i) { return json::array({i.low, i.high}); }
stats::Interval interval_from(const json& j) { return {j.at(0).get<double>(), j.at(1).get<double>()}; }

// Percentile keys read as "p50", "p99", "p99.9".
std::string percentile_key(double p) {
  auto text = json_text(nlohmann::json(p));
  if (text.size() > 2 && text.substr(text.size() - 2) == ".0") text.resize(text.size() - 2);
  return "p" + text;
}

}  // namespace

std::string_view name_of(ResultOrigin origin) { return name_in(kOrigins, origin); }

ResultOrigin parse_result_origin(const std::string& text, const std::string& what) { return parse_in(kOrigins, text, what); }

std::string_view origin_description(ResultOrigin origin) {
  switch (origin) {
    case ResultOrigin::kInProcess:
      return "latency around the framework call, in the measuring process";
    case ResultOrigin::kServed:
      return "server-side latency of infermark serve, request parsed to response ready";
    case ResultOrigin::kRemote:
      return "client-side latency of infermark load, network and server included";
  }
  return "?";
}

ResultOrigin derived_origin(const RunResult& r) {
  if (r.backend.name == "remote" || r.remote) return ResultOrigin::kRemote;
  if (is_served(r.scenario)) return ResultOrigin::kServed;
  return ResultOrigin::kInProcess;
}

json latency_json(const stats::LatencySummary& s) {
  json percentiles = json::object();
  for (const auto& p : s.percentiles)
    percentiles[percentile_key(p.percentile)] = {
        {"percentile", p.percentile}, {"value", p.value}, {"ci95", p.ci95 ? interval_json(*p.ci95) : json(nullptr)}};
  return {{"count", s.count},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"min", s.min},
          {"max", s.max},
          {"mean_ci95", interval_json(s.mean_ci95)},
          {"percentiles", percentiles}};
}

stats::LatencySummary latency_from(const json& j) {
  stats::LatencySummary s;
  s.count = integer<std::size_t>(j.at("count"));
  s.mean = j.at("mean");
  s.stddev = j.at("stddev");
  s.min = j.at("min");
  s.max = j.at("max");
  s.mean_ci95 = interval_from(j.at("mean_ci95"));
  for (const auto& [key, p] : j.at("percentiles").items()) {
    stats::PercentileEstimate e{p.at("percentile"), p.at("value"), std::nullopt};
    if (!p.at("ci95").is_null()) e.ci95 = interval_from(p.at("ci95"));
    s.percentiles.push_back(e);
  }
  std::sort(s.percentiles.begin(), s.percentiles.end(), [](auto& a, auto& b) { return a.percentile < b.percentile; });
  return s;
}

namespace {

// backends/effective_setting.hpp converts each entry (its state, and files written before it).
json settings_json(const std::vector<EffectiveSetting>& settings) {
  json out = json::array();
  for (const auto& s : settings) out.push_back(s);
  return out;
}

std::vector<EffectiveSetting> settings_from(const json& j) { return j.get<std::vector<EffectiveSetting>>(); }

json inputs_fed_json(const std::vector<Tensor>& inputs) {
  json out = json::array();
  for (const auto& t : inputs) out.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}});
  return out;
}

std::vector<Tensor> inputs_fed_from(const json& j) {
  std::vector<Tensor> out;
  for (const auto& t : j)
    out.push_back({t.at("name"), parse_dtype(t.at("dtype").get<std::string>()), integers<std::int64_t>(t.at("shape")), {}});
  return out;
}

json cross_check_json(const std::optional<CrossCheck>& check) {
  if (!check) return nullptr;
  json outputs = json::array();
  for (const auto& o : check->outputs) {
    outputs.push_back({{"output", o.output},
                       {"comparable", o.comparable},
                       {"note", o.note},
                       {"max_abs_error", o.max_abs_error},
                       {"mean_abs_error", o.mean_abs_error},
                       {"cosine_similarity", o.cosine_similarity},
                       {"top1_agreement", o.top1_agreement ? json(*o.top1_agreement) : json(nullptr)}});
    if (o.vector_cosine_mean && o.vector_cosine_min) {  // rank >= 3 outputs: one cosine per vector
      outputs.back()["vector_cosine_mean"] = *o.vector_cosine_mean;
      outputs.back()["vector_cosine_min"] = *o.vector_cosine_min;
    }
  }
  json by_shape = json::array();
  for (const auto& a : check->by_shape)
    by_shape.push_back({{"shape", a.shape},
                        {"sets", a.sets},
                        {"max_abs_error", a.max_abs_error},
                        {"min_cosine_similarity", a.min_cosine_similarity},
                        {"comparable", a.comparable},
                        {"top1_agreement", a.top1_agreement ? json(*a.top1_agreement) : json(nullptr)}});
  return {{"reference_backend", check->reference_backend},
          {"reference_result", check->reference_result},
          {"is_reference", check->is_reference},
          {"outputs", outputs},
          {"by_shape", by_shape}};
}

std::optional<CrossCheck> cross_check_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  CrossCheck check{j.at("reference_backend"), j.at("reference_result"), j.at("is_reference"), {}, {}};
  for (const auto& o : j.at("outputs")) {
    stats::OutputAgreement a{o.at("output"),        o.at("comparable"),     o.at("note"),
                             o.at("max_abs_error"), o.at("mean_abs_error"), o.at("cosine_similarity"),
                             std::nullopt,          std::nullopt,           std::nullopt};
    if (!o.at("top1_agreement").is_null()) a.top1_agreement = o.at("top1_agreement").get<double>();
    if (o.contains("vector_cosine_mean")) {
      a.vector_cosine_mean = o.at("vector_cosine_mean").get<double>();
      a.vector_cosine_min = o.at("vector_cosine_min").get<double>();
    }
    check.outputs.push_back(a);
  }
  for (const auto& a : j.value("by_shape", json::array())) {
    ShapeAgreement shape{a.at("shape"), integer<int>(a.at("sets")), a.at("max_abs_error"), a.at("min_cosine_similarity"),
                         std::nullopt,  a.value("comparable", true)};
    if (!a.at("top1_agreement").is_null()) shape.top1_agreement = a.at("top1_agreement").get<double>();
    check.by_shape.push_back(shape);
  }
  return check;
}

// Columns rather than one object per request: a few numbers each, for every request of a run.
json request_latencies_json(const std::vector<loadgen::RequestLatencies>& requests) {
  json ttft = json::array(), tpot = json::array(), e2e = json::array();
  for (const auto& r : requests) {
    ttft.push_back(r.ttft_ns);
    tpot.push_back(r.tpot_ns ? json(*r.tpot_ns) : json(nullptr));
    e2e.push_back(r.e2e_ns);
  }
  return {{"ttft_ns", std::move(ttft)}, {"tpot_ns", std::move(tpot)}, {"e2e_ns", std::move(e2e)}};
}

// Columns of unequal length or of other than integers are a damaged file: none kept, as in older files.
std::vector<loadgen::RequestLatencies> request_latencies_from(const json& j) {
  const auto column = [&](const char* key) { return j.is_object() && j.contains(key) && j[key].is_array() ? &j[key] : nullptr; };
  const auto *ttft = column("ttft_ns"), *tpot = column("tpot_ns"), *e2e = column("e2e_ns");
  if (!ttft || !tpot || !e2e || ttft->size() != tpot->size() || ttft->size() != e2e->size()) return {};
  std::vector<loadgen::RequestLatencies> requests;
  for (std::size_t i = 0; i < ttft->size(); ++i) {
    const auto &t = (*ttft)[i], &p = (*tpot)[i], &e = (*e2e)[i];
    if (!t.is_number_integer() || !e.is_number_integer() || !(p.is_null() || p.is_number_integer())) return {};
    requests.push_back(
        {t.get<std::int64_t>(), e.get<std::int64_t>(), p.is_null() ? std::nullopt : std::optional(p.get<std::int64_t>())});
  }
  return requests;
}

}  // namespace

json to_json(const GenerationResult& g) {
  const auto summary = [](const std::optional<stats::LatencySummary>& s) { return s ? latency_json(*s) : json(nullptr); };
  const auto lengths = [](const TokenLengths& t) { return json{{"mean", t.mean}, {"stddev", t.stddev}, {"total", t.total}}; };
  json j{{"concurrency", g.concurrency},
         {"prompt_tokens", lengths(g.prompt_tokens)},
         {"output_tokens", lengths(g.output_tokens)},
         {"requests", g.requests},
         {"steps", g.steps},
         {"wall_s", g.wall_s},
         {"ttft_ms", summary(g.ttft_ms)},
         {"tpot_ms", summary(g.tpot_ms)},
         {"itl_ms", summary(g.itl_ms)},
         {"e2e_ms", summary(g.e2e_ms)},
         {"prefill_tokens_per_s", g.prefill_tokens_per_s},
         {"decode_tokens_per_s", g.decode_tokens_per_s},
         {"output_tokens_per_s", g.output_tokens_per_s},
         {"requests_per_s", g.requests_per_s}};
  if (!g.ttft_from.empty()) j["ttft_from"] = g.ttft_from;
  if (!g.prompt_source.empty()) j["prompt_source"] = g.prompt_source;
  if (g.goodput_rps) j["goodput_rps"] = *g.goodput_rps;
  if (g.perplexity) j["perplexity"] = to_json(*g.perplexity);
  if (g.prompt_tokens_reused) j["prompt_tokens_reused"] = *g.prompt_tokens_reused;
  for (const auto& group : g.by_group)
    j["by_group"].push_back({{"label", group.label},
                             {"requests", group.requests},
                             {"prompt_tokens_mean", group.prompt_tokens_mean},
                             {"ttft_ms", summary(group.ttft_ms)},
                             {"e2e_ms", summary(group.e2e_ms)}});
  if (!g.request_latencies.empty()) j["request_latencies"] = request_latencies_json(g.request_latencies);
  if (g.shared_prefix) {
    const auto& p = *g.shared_prefix;
    j["shared_prefix"] = {{"groups", p.groups},
                          {"prefix_tokens", p.prefix_tokens},
                          {"warm_requests", p.split.warm},
                          {"cold_requests", p.split.cold},
                          {"warm_share", p.split.warm_share()},
                          {"ttft_warm_ms", summary(p.split.ttft_warm_ms)},
                          {"ttft_cold_ms", summary(p.split.ttft_cold_ms)}};
  }
  return j;
}

GenerationResult generation_from(const json& j) {
  const auto summary_in = [](const json& object, const char* key) {
    return object.contains(key) && object[key].is_object() ? std::optional(latency_from(object[key])) : std::nullopt;
  };
  const auto summary = [&](const char* key) { return summary_in(j, key); };
  const auto lengths = [&](const char* key) {
    const auto& t = j.at(key);
    return TokenLengths{t.value("mean", 0.0), t.value("stddev", 0.0), integer_or(t, "total", 0LL)};
  };
  GenerationResult g;
  g.concurrency = integer_or(j, "concurrency", 0);
  g.prompt_tokens = lengths("prompt_tokens");
  g.output_tokens = lengths("output_tokens");
  g.requests = integer_or(j, "requests", std::size_t{0});
  g.steps = integer_or(j, "steps", 0);
  g.wall_s = j.value("wall_s", 0.0);
  g.ttft_ms = summary("ttft_ms");
  g.tpot_ms = summary("tpot_ms");
  g.itl_ms = summary("itl_ms");
  g.e2e_ms = summary("e2e_ms");
  g.prefill_tokens_per_s = j.value("prefill_tokens_per_s", 0.0);
  g.decode_tokens_per_s = j.value("decode_tokens_per_s", 0.0);
  g.output_tokens_per_s = j.value("output_tokens_per_s", 0.0);
  g.requests_per_s = j.value("requests_per_s", 0.0);
  g.ttft_from = j.value("ttft_from", "");
  g.prompt_source = j.value("prompt_source", "");
  if (j.contains("goodput_rps") && j["goodput_rps"].is_number()) g.goodput_rps = j["goodput_rps"].get<double>();
  if (j.contains("perplexity") && j["perplexity"].is_object()) g.perplexity = perplexity_from(j["perplexity"]);
  if (j.contains("prompt_tokens_reused") && j["prompt_tokens_reused"].is_number_unsigned())
    g.prompt_tokens_reused = j["prompt_tokens_reused"].get<std::uint64_t>();
  if (j.contains("by_group") && j["by_group"].is_array())
    for (const auto& group : j["by_group"])
      g.by_group.push_back({group.value("label", ""), integer_or(group, "requests", std::size_t{0}),
                            group.value("prompt_tokens_mean", 0.0), summary_in(group, "ttft_ms"), summary_in(group, "e2e_ms")});
  if (j.contains("request_latencies")) g.request_latencies = request_latencies_from(j["request_latencies"]);
  if (j.contains("shared_prefix") && j["shared_prefix"].is_object()) {
    const auto& p = j["shared_prefix"];
    g.shared_prefix = SharedPrefixResult{
        integer_or(p, "groups", 0), integer_or(p, "prefix_tokens", 0),
        loadgen::PrefixSplit{integer_or(p, "warm_requests", std::size_t{0}), integer_or(p, "cold_requests", std::size_t{0}),
                             summary_in(p, "ttft_warm_ms"), summary_in(p, "ttft_cold_ms")}};
  }
  return g;
}

json to_json(const ResourceRecord& resources) {
  auto j = probes::to_json(resources.summary);
  j["inferences"] = resources.inferences;
  j["inferences_per_joule"] = resources.inferences_per_joule ? json(*resources.inferences_per_joule) : json(nullptr);
  return j;
}

ResourceRecord resources_from(const json& j) {
  ResourceRecord r{probes::resource_summary_from(j), j.value("inferences", 0.0), std::nullopt};
  if (j.contains("inferences_per_joule") && j["inferences_per_joule"].is_number())
    r.inferences_per_joule = j["inferences_per_joule"].get<double>();
  return r;
}

json to_json(const RunResult& r) {
  json j;
  j["schema"] = kSchemaName;
  j["schema_version"] = kSchemaVersion;
  j["origin"] = name_of(r.origin);
  j["status"] = name_of(r.status);
  j["error"] = r.error;
  j["started_at"] = r.started_at;
  j["isolation"] = r.isolation;
  j["model"] = {{"path", r.model.path},
                {"name", r.model.name},
                {"format", r.model.format},
                {"size_bytes", r.model.size_bytes},
                {"inputs", specs_json(r.model.inputs)},
                {"outputs", specs_json(r.model.outputs)}};
  if (!r.model.output_kinds.empty()) {
    auto& kinds = j["model"]["output_kinds"] = json::object();
    for (const auto& [name, kind] : r.model.output_kinds) kinds[name] = std::string(output_kind_name(kind));
  }
  j["backend"] = {{"name", r.backend.name},       {"framework", r.backend.framework}, {"version", r.backend.version},
                  {"formats", r.backend.formats}, {"devices", r.backend.devices},     {"notes", r.backend.notes}};
  j["settings"] = {{"requested",
                    {{"intra_op_threads", r.requested.intra_op_threads},
                     {"inter_op_threads", r.requested.inter_op_threads},
                     {"device", r.requested.device},
                     {"precision", r.requested.precision},
                     {"expected_concurrency", r.requested.expected_concurrency},
                     {"artifacts_dir", r.requested.artifacts_dir},
                     {"extras", r.requested.extras}}},
                   {"effective", settings_json(r.effective_settings)}};
  j["scenario"] = {
      {"name", scenario_label(r.scenario)},          {"batch", r.scenario.batch}, {"warmup_runs", r.scenario.warmup_runs},
      {"timed_runs", r.scenario.timed_runs},         {"seed", r.scenario.seed},   {"inputs", inputs_fed_json(r.scenario.inputs)},
      {"parameters", to_json(r.scenario.parameters)}};
  j["timing_ms"] = {
      {"load", r.timing.load_ms}, {"prepare", r.timing.prepare_ms}, {"first_inference", r.timing.first_inference_ms}};
  j["latency_ms"] = r.latency_ms ? latency_json(*r.latency_ms) : json(nullptr);
  j["percentile_method"] = r.percentile_method;
  j["samples_ms"] = r.samples_ms;
  j["latency_histogram_ns"] = r.latency_histogram ? r.latency_histogram->to_json() : json(nullptr);
  j["time_series"] = r.time_series ? to_json(*r.time_series) : json(nullptr);
  j["phases"] = json::array();
  for (const auto& phase : r.phases) j["phases"].push_back(to_json(phase));
  j["analysis"] = loadgen::to_json(r.analysis);
  j["resources"] = r.resources ? to_json(*r.resources) : json(nullptr);
  j["generation"] = r.generation ? to_json(*r.generation) : json(nullptr);
  j["throughput"] = {{"wall_s", r.throughput.wall_s},
                     {"queries_per_s", r.throughput.queries_per_s},
                     {"inferences_per_s", r.throughput.inferences_per_s}};
  j["memory"] = {{"rss_before_load_mb", r.memory.rss_before_load_mb},
                 {"rss_after_load_mb", r.memory.rss_after_load_mb},
                 {"peak_rss_mb", r.memory.peak_rss_mb},
                 {"peak_scope", r.memory.peak_scope},
                 {"limit_mb", r.memory.limit_mb ? nlohmann::json(*r.memory.limit_mb) : nlohmann::json(nullptr)}};
  j["outputs_dir"] = r.outputs_dir;
  j["cross_check"] = cross_check_json(r.cross_check);
  if (r.label_accuracy) j["label_accuracy"] = stats::to_json(*r.label_accuracy);
  if (r.pipeline) j["pipeline"] = to_json(*r.pipeline);
  if (r.remote) j["remote"] = to_json(*r.remote);
  if (r.scaleout) j["scaleout"] = to_json(*r.scaleout);
  j["environment"] = r.environment;
  return j;
}

RunResult run_result_from_json(const json& j, const std::string& source) {
  // text() and number() read a mistyped field as absent: nlohmann's value() would throw its type_error.
  if (text(j, "schema") != kSchemaName)
    throw Error(source + ": not an infermark run result (no \"schema\": \"" + kSchemaName + "\")");
  const double version = number(j, "schema_version");
  if (version > kSchemaVersion)
    throw Error(source + ": schema version " + json(version).dump() + " is newer than this infermark reads (" +
                std::to_string(kSchemaVersion) + "); upgrade infermark");
  try {
    RunResult r;
    r.status = parse_cell_status(j.at("status").get<std::string>(), "status");
    r.error = j.at("error");
    r.started_at = j.at("started_at");
    r.isolation = j.at("isolation");
    const auto& m = j.at("model");
    r.model = {m.at("path"),
               m.at("name"),
               m.at("format"),
               integer<long long>(m.at("size_bytes")),
               specs_from(m.at("inputs")),
               specs_from(m.at("outputs")),
               {}};
    const auto kinds = m.value("output_kinds", json::object());
    for (const auto& [name, kind] : kinds.items())
      r.model.output_kinds[name] = parse_output_kind(kind.get<std::string>(), source + ": model.output_kinds." + name);
    const auto& b = j.at("backend");
    r.backend = {b.at("name"), b.at("framework"), b.at("version"), b.at("formats"), b.at("devices"), b.value("notes", ""), {}};
    const auto& req = j.at("settings").at("requested");
    r.requested = {integer<int>(req.at("intra_op_threads")),
                   integer<int>(req.at("inter_op_threads")),
                   req.at("device"),
                   req.at("precision"),
                   integer_or(req, "expected_concurrency", 1),
                   req.value("artifacts_dir", ""),
                   req.at("extras")};
    r.effective_settings = settings_from(j.at("settings").at("effective"));
    const auto& s = j.at("scenario");
    r.scenario.batch = integer<long long>(s.at("batch"));
    r.scenario.warmup_runs = integer<int>(s.at("warmup_runs"));
    r.scenario.timed_runs = integer<int>(s.at("timed_runs"));
    r.scenario.seed = integer<unsigned long long>(s.at("seed"));
    r.scenario.inputs = inputs_fed_from(s.at("inputs"));
    try {
      r.scenario.parameters = scenario_parameters_from(s.value("parameters", json::object()));
      read_scenario_label(r.scenario, s.at("name").get<std::string>());
    } catch (const Error& e) {
      throw Error(source + ": " + e.what());
    }
    const auto& t = j.at("timing_ms");
    r.timing = {t.at("load"), t.at("prepare"), t.at("first_inference")};
    if (!j.at("latency_ms").is_null()) r.latency_ms = latency_from(j.at("latency_ms"));
    r.samples_ms = j.at("samples_ms").get<std::vector<double>>();
    r.percentile_method = j.value("percentile_method", "exact");
    try {
      if (json_field(j, "latency_histogram_ns") && !j["latency_histogram_ns"].is_null())
        r.latency_histogram = latency_histogram_from(j["latency_histogram_ns"], "latency_histogram_ns");
      if (json_field(j, "time_series") && !j["time_series"].is_null())
        r.time_series = time_series_from(j["time_series"], "time_series");
      if (json_field(j, "phases") && !j["phases"].is_null()) {
        if (!j["phases"].is_array()) throw Error("phases: expected a list, got " + j["phases"].dump().substr(0, 60));
        for (std::size_t i = 0; i < j["phases"].size(); ++i)
          r.phases.push_back(phase_record_from(j["phases"][i], "phases[" + std::to_string(i) + "]"));
      }
    } catch (const Error& e) {
      throw Error(source + ": " + e.what());
    }
    r.analysis = loadgen::analysis_from(j.value("analysis", json::object()));  // lenient: never throws
    if (j.contains("resources") && j["resources"].is_object()) r.resources = resources_from(j["resources"]);
    if (j.contains("generation") && j["generation"].is_object()) r.generation = generation_from(j["generation"]);
    const auto& tp = j.at("throughput");
    r.throughput = {tp.at("wall_s"), tp.at("queries_per_s"), tp.at("inferences_per_s")};
    const auto& mem = j.at("memory");
    r.memory = {mem.at("rss_before_load_mb"), mem.at("rss_after_load_mb"), mem.at("peak_rss_mb"), mem.at("peak_scope"),
                optional_number(mem, "limit_mb")};
    r.outputs_dir = j.value("outputs_dir", "");
    r.cross_check = cross_check_from(j.value("cross_check", json(nullptr)));
    if (j.contains("label_accuracy") && j["label_accuracy"].is_object())
      r.label_accuracy = stats::label_accuracy_from(j["label_accuracy"]);
    if (json_field(j, "pipeline") && !j["pipeline"].is_null())
      r.pipeline = pipeline_record_from(j["pipeline"], source + ": pipeline");
    if (json_field(j, "remote") && !j["remote"].is_null()) r.remote = remote_record_from(j["remote"], source + ": remote");
    if (json_field(j, "scaleout") && !j["scaleout"].is_null())
      r.scaleout = scaleout_record_from(j["scaleout"], source + ": scaleout");
    r.environment = j.at("environment");
    // Files written before "origin" existed: from what they record (derived_origin).
    r.origin =
        j.contains("origin") ? parse_result_origin(j["origin"].get<std::string>(), source + ": origin") : derived_origin(r);
    return r;
  } catch (const json::exception& e) {
    throw Error(source + ": malformed run result: " + e.what());
  }
}

RunResult read_run_result(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open result file");
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  return run_result_from_json(j, path);
}

void write_run_result(const RunResult& result, const std::string& path) {
  const auto temp = path + ".partial";
  std::ofstream out(temp);
  if (!out) throw Error(path + ": cannot write result file: " + std::strerror(errno));
  out << json_text(to_json(result), 2) << '\n';
  out.close();  // a full disk or a file size limit shows here, when the buffer is written
  if (!out) {
    const std::string cause = std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);  // no half-written file left behind
    throw Error(path + ": result file not written: " + cause);
  }
  std::filesystem::rename(temp, path);
}

}  // namespace infermark::result

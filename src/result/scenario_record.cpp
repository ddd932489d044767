#include "result/scenario_record.hpp"

#include <type_traits>

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "result/cell_json.hpp"
#include "result/record_fields.hpp"

namespace infermark::result {
namespace {

using detail::put;
using nlohmann::json;

constexpr const char* kServed = "serve";
constexpr const char* kPipelinePrefix = "pipeline-";

// `j[key]` into `into` when present and not null (NaN is written as null); a value of the wrong
// kind throws infermark::Error naming `where`.`key`.
template <typename T>
void read_field(const json& j, const char* key, const std::string& where, T& into) {
  if (!j.contains(key) || j[key].is_null()) return;
  try {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      into = integer<T>(j[key]);
    else
      into = j[key].get<T>();
  } catch (const json::exception& e) {
    throw Error(where + "." + key + ": " + j[key].dump() + " is not a valid value (" + e.what() + ")");
  }
}

template <typename T>
void read_field(const json& j, const char* key, const std::string& where, std::optional<T>& into) {
  if (!j.contains(key) || j[key].is_null()) return;
  T value{};
  read_field(j, key, where, value);
  into = value;
}

std::string text_field(const json& j, const char* key, const std::string& where, const std::string& fallback) {
  std::string value = fallback;
  read_field(j, key, where, value);
  return value;
}

void require_object(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object, got " + j.dump());
}

ShapeSetRecord shape_set_from(const json& j, const std::string& where) {
  require_object(j, where);
  ShapeSetRecord s;
  read_field(j, "group", where, s.group);
  read_field(j, "queries", where, s.queries);
  read_field(j, "p50", where, s.p50_ms);
  read_field(j, "p90", where, s.p90_ms);
  read_field(j, "p99", where, s.p99_ms);
  read_field(j, "mean", where, s.mean_ms);
  read_field(j, "input_elements", where, s.input_elements);
  return s;
}

json to_json(const ShapeSetRecord& s) {
  json j{{"queries", s.queries}, {"input_elements", s.input_elements}};
  put(j, "group", s.group);
  put(j, "p50", s.p50_ms);
  put(j, "p90", s.p90_ms);
  put(j, "p99", s.p99_ms);
  put(j, "mean", s.mean_ms);
  return j;
}

VaryingShapesRecord varying_shapes_at(const json& j, const std::string& where) {
  require_object(j, where);
  VaryingShapesRecord v;
  read_field(j, "ranges", where, v.ranges);
  read_field(j, "bucketed", where, v.bucketed);
  if (j.contains("sets") && !j["sets"].is_null()) {
    if (!j["sets"].is_array()) throw Error(where + ".sets: expected an array, got " + j["sets"].dump());
    for (std::size_t i = 0; i < j["sets"].size(); ++i)
      v.sets.push_back(shape_set_from(j["sets"][i], where + ".sets[" + std::to_string(i) + "]"));
  }
  read_field(j, "distinct_shapes", where, v.distinct_shapes);
  read_field(j, "input_sets", where, v.input_sets);
  read_field(j, "mean_input_elements", where, v.mean_input_elements);
  read_field(j, "set_groups", where, v.set_groups);
  return v;
}

SampleDraw samples_from(const json& j, const std::string& where) {
  require_object(j, where);
  SampleDraw s;
  read_field(j, "count", where, s.count);
  read_field(j, "groups", where, s.groups);
  read_field(j, "order", where, s.order);
  read_field(j, "seed", where, s.seed);
  return s;
}

std::vector<RateSegmentRecord> schedule_from(const json& j, const std::string& where) {
  if (!j.is_array()) throw Error(where + ": expected an array, got " + j.dump());
  std::vector<RateSegmentRecord> schedule;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto at = where + "[" + std::to_string(i) + "]";
    require_object(j[i], at);
    RateSegmentRecord s;
    read_field(j[i], "duration_s", at, s.duration_s);
    read_field(j[i], "rate_qps", at, s.rate_qps);
    schedule.push_back(s);
  }
  return schedule;
}

constexpr const char* kServingKeys[] = {"variant",
                                        "weight",
                                        "instances",
                                        "max_batch_size",
                                        "max_queue_delay_us",
                                        "inline_below_us",
                                        "batching_note",
                                        "sequence_slots",
                                        "context_per_sequence",
                                        "errors",
                                        "rows",
                                        "latency_measured",
                                        "shadow"};

ServingRecord serving_from(const json& j, const std::string& where) {
  ServingRecord s;
  read_field(j, "variant", where, s.variant);
  read_field(j, "weight", where, s.weight);
  read_field(j, "instances", where, s.instances);
  read_field(j, "max_batch_size", where, s.max_batch_size);
  read_field(j, "max_queue_delay_us", where, s.max_queue_delay_us);
  read_field(j, "inline_below_us", where, s.inline_below_us);
  read_field(j, "batching_note", where, s.batching_note);
  read_field(j, "sequence_slots", where, s.sequence_slots);
  read_field(j, "context_per_sequence", where, s.context_per_sequence);
  read_field(j, "errors", where, s.errors);
  read_field(j, "rows", where, s.rows);
  read_field(j, "latency_measured", where, s.latency_measured);
  if (j.contains("shadow") && !j["shadow"].is_null()) {
    const auto& shadows = j["shadow"];
    require_object(shadows, where + ".shadow");
    for (const auto& [name, record] : shadows.items()) {
      const auto at = where + ".shadow." + name;
      require_object(record, at);
      ShadowRecord& r = s.shadow[name];
      read_field(record, "dropped", at, r.dropped);
      if (record.contains("by_shape") && !record["by_shape"].is_null()) {
        if (!record["by_shape"].is_array()) throw Error(at + ".by_shape: expected an array, got " + record["by_shape"].dump());
        for (std::size_t i = 0; i < record["by_shape"].size(); ++i) {
          const auto& row = record["by_shape"][i];
          const auto row_at = at + ".by_shape[" + std::to_string(i) + "]";
          require_object(row, row_at);
          ShadowShapeRecord shape;
          read_field(row, "shape", row_at, shape.shape);
          read_field(row, "compared", row_at, shape.compared);
          read_field(row, "disagreed", row_at, shape.disagreed);
          read_field(row, "max_abs_error", row_at, shape.max_abs_error);
          r.by_shape.push_back(shape);
        }
      }
    }
  }
  return s;
}

void put_serving(json& j, const ServingRecord& s) {
  j["variant"] = s.variant;
  j["weight"] = s.weight;
  put(j, "instances", s.instances);
  put(j, "max_batch_size", s.max_batch_size);
  put(j, "max_queue_delay_us", s.max_queue_delay_us);
  put(j, "inline_below_us", s.inline_below_us);
  put(j, "batching_note", s.batching_note);
  put(j, "sequence_slots", s.sequence_slots);
  put(j, "context_per_sequence", s.context_per_sequence);
  j["errors"] = s.errors;
  j["rows"] = s.rows;
  j["latency_measured"] = s.latency_measured;
  if (s.shadow.empty()) return;
  json& shadows = j["shadow"] = json::object();
  for (const auto& [name, r] : s.shadow) {
    json shapes = json::array();
    for (const auto& shape : r.by_shape)
      shapes.push_back({{"shape", shape.shape},
                        {"compared", shape.compared},
                        {"disagreed", shape.disagreed},
                        {"max_abs_error", shape.max_abs_error}});
    shadows[name] = {{"by_shape", shapes}, {"dropped", r.dropped}};
  }
}

// The keys the typed members of ScenarioParameters own; everything else is `extra`. The serving
// keys only where the parameters are served traffic's (they name a variant).
bool typed_key(const std::string& key, bool served) {
  if (served)
    for (const char* k : kServingKeys)
      if (key == k) return true;
  static const json kRequestKeys = scenario_json(loadgen::ScenarioSpec{});
  static const char* const kResolved[] = {"lanes",    "session_sharing", "sessions", "batching",       "capacity_qps",
                                          "soak_qps", "schedule",        "samples",  "varying_shapes", "trace"};
  if (kRequestKeys.contains(key)) return true;
  for (const char* k : kResolved)
    if (key == k) return true;
  return false;
}

}  // namespace

std::string scenario_label(const ScenarioDescription& s) {
  if (s.pipeline_mode) return kPipelinePrefix + std::string(name_of(*s.pipeline_mode));
  if (!s.name) return kServed;
  return std::string(loadgen::name_of(*s.name));
}

bool ran(const ScenarioDescription& description, loadgen::Scenario scenario) {
  return !description.pipeline_mode && description.name == scenario;
}

bool is_served(const ScenarioDescription& scenario) { return !scenario.name && !scenario.pipeline_mode; }

int requested_concurrency(const ScenarioParameters& parameters) {
  return parameters.request ? parameters.request->concurrency : 0;
}

loadgen::ScenarioSpec scenario_request_from(const json& j, const std::string& where) {
  require_object(j, where);
  loadgen::ScenarioSpec s;
  if (!j.contains("name")) throw Error(where + ".name: missing");
  s.name = loadgen::parse_scenario(text_field(j, "name", where, ""), where + ".name");
  read_field(j, "concurrency", where, s.concurrency);
  read_field(j, "warmup_queries", where, s.warmup_queries);
  read_field(j, "warmup_s", where, s.warmup_s);
  read_field(j, "min_queries", where, s.min_queries);
  read_field(j, "min_duration_s", where, s.min_duration_s);
  read_field(j, "max_queries", where, s.max_queries);
  read_field(j, "max_duration_s", where, s.max_duration_s);
  read_field(j, "qps", where, s.qps);
  s.arrivals =
      loadgen::parse_arrivals(text_field(j, "arrivals", where, std::string(loadgen::name_of(s.arrivals))), where + ".arrivals");
  s.pacing = loadgen::parse_pacing(text_field(j, "pacing", where, std::string(loadgen::name_of(s.pacing))), where + ".pacing");
  read_field(j, "duration_s", where, s.duration_s);
  read_field(j, "sla_p99_ms", where, s.sla_p99_ms);
  read_field(j, "ttft_ms", where, s.ttft_ms);
  read_field(j, "tpot_ms", where, s.tpot_ms);
  read_field(j, "find_max_qps", where, s.find_max_qps);
  read_field(j, "max_queue", where, s.max_queue);
  read_field(j, "seed", where, s.seed);
  s.ramp_by =
      loadgen::parse_ramp_by(text_field(j, "ramp_by", where, std::string(loadgen::name_of(s.ramp_by))), where + ".ramp_by");
  read_field(j, "ramp_step", where, s.ramp_step);
  read_field(j, "ramp_start", where, s.ramp_start);
  read_field(j, "ramp_steps", where, s.ramp_steps);
  read_field(j, "until_saturation", where, s.until_saturation);
  read_field(j, "step_duration_s", where, s.step_duration_s);
  read_field(j, "capacity_probe_s", where, s.capacity_probe_s);
  read_field(j, "soak_share", where, s.soak_share);
  read_field(j, "soak_duration_s", where, s.soak_duration_s);
  read_field(j, "soak_interval_s", where, s.soak_interval_s);
  read_field(j, "pulse_baseline_share", where, s.pulse_baseline_share);
  read_field(j, "pulse_burst_share", where, s.pulse_burst_share);
  read_field(j, "pulse_baseline_s", where, s.pulse_baseline_s);
  read_field(j, "pulse_burst_s", where, s.pulse_burst_s);
  read_field(j, "pulse_recovery_s", where, s.pulse_recovery_s);
  read_field(j, "prompt_tokens", where, s.prompt_tokens);
  read_field(j, "prompt_tokens_stddev", where, s.prompt_tokens_stddev);
  read_field(j, "output_tokens", where, s.output_tokens);
  read_field(j, "output_tokens_stddev", where, s.output_tokens_stddev);
  read_field(j, "shared_prefix_groups", where, s.shared_prefix.groups);
  read_field(j, "shared_prefix_tokens", where, s.shared_prefix.tokens);
  read_field(j, "trace_file", where, s.trace.file);
  s.trace.format = loadgen::parse_trace_format(text_field(j, "trace_format", where, "auto"), where + ".trace_format");
  read_field(j, "trace_speed", where, s.trace.speed);
  read_field(j, "trace_requests", where, s.trace.max_requests);
  read_field(j, "dataset", where, s.dataset);
  read_field(j, "conversation_turns", where, s.conversation.turns);
  read_field(j, "think_s", where, s.conversation.think_s);
  read_field(j, "think_stddev_s", where, s.conversation.think_stddev_s);
  return s;
}

json to_json(const VaryingShapesRecord& v) {
  json j{{"ranges", v.ranges}, {"sets", json::array()}, {"mean_input_elements", v.mean_input_elements}};
  for (const auto& s : v.sets) j["sets"].push_back(to_json(s));
  put(j, "bucketed", v.bucketed);
  put(j, "distinct_shapes", v.distinct_shapes);
  put(j, "input_sets", v.input_sets);
  if (!v.set_groups.empty()) j["set_groups"] = v.set_groups;
  return j;
}

VaryingShapesRecord varying_shapes_from(const json& j) { return varying_shapes_at(j, "scenario.parameters.varying_shapes"); }

json to_json(const ScenarioParameters& p) {
  json j = p.extra.is_object() ? p.extra : json::object();
  if (p.request) j.update(scenario_json(*p.request));
  put(j, "lanes", p.lanes);
  put(j, "session_sharing", p.session_sharing);
  if (p.sessions) j["sessions"] = std::string(name_of(*p.sessions));
  put(j, "batching", p.batching);
  put(j, "capacity_qps", p.capacity_qps);
  put(j, "soak_qps", p.soak_qps);
  if (p.schedule) {
    j["schedule"] = json::array();
    for (const auto& s : *p.schedule) j["schedule"].push_back({{"duration_s", s.duration_s}, {"rate_qps", s.rate_qps}});
  }
  if (p.samples)
    j["samples"] = {
        {"count", p.samples->count}, {"groups", p.samples->groups}, {"order", p.samples->order}, {"seed", p.samples->seed}};
  if (p.varying_shapes) j["varying_shapes"] = to_json(*p.varying_shapes);
  if (p.trace) j["trace"] = loadgen::to_json(*p.trace);
  if (p.serving) put_serving(j, *p.serving);
  return j;
}

ScenarioParameters scenario_parameters_from(const json& j) {
  const std::string where = "scenario.parameters";
  ScenarioParameters p;
  if (j.is_null()) return p;
  require_object(j, where);
  // Served traffic records no request; every other result records the scenario it was asked to run.
  if (j.contains("name")) p.request = scenario_request_from(j, where);
  read_field(j, "lanes", where, p.lanes);
  read_field(j, "session_sharing", where, p.session_sharing);
  if (j.contains("sessions") && !j["sessions"].is_null())
    p.sessions = parse_session_sharing(text_field(j, "sessions", where, ""), where + ".sessions");
  read_field(j, "batching", where, p.batching);
  read_field(j, "capacity_qps", where, p.capacity_qps);
  read_field(j, "soak_qps", where, p.soak_qps);
  if (j.contains("schedule") && !j["schedule"].is_null()) p.schedule = schedule_from(j["schedule"], where + ".schedule");
  if (j.contains("samples") && !j["samples"].is_null()) p.samples = samples_from(j["samples"], where + ".samples");
  if (j.contains("varying_shapes") && !j["varying_shapes"].is_null())
    p.varying_shapes = varying_shapes_at(j["varying_shapes"], where + ".varying_shapes");
  if (j.contains("trace") && !j["trace"].is_null()) p.trace = loadgen::trace_summary_from(j["trace"], where + ".trace");
  const bool served = j.contains("variant");
  if (served) p.serving = serving_from(j, where);
  for (const auto& [key, value] : j.items())
    if (!typed_key(key, served)) p.extra[key] = value;
  return p;
}

void merge_resolved(ScenarioParameters& parameters, const json& resolved) {
  if (!resolved.is_object() || resolved.empty()) return;
  auto j = to_json(parameters);
  j.update(resolved);
  parameters = scenario_parameters_from(j);
}

void read_scenario_label(ScenarioDescription& scenario, const std::string& text) {
  scenario.pipeline_mode.reset();
  if (text == kServed) {
    scenario.name = std::nullopt;
  } else if (text.rfind(kPipelinePrefix, 0) == 0 && text.size() > std::string(kPipelinePrefix).size()) {
    scenario.pipeline_mode = parse_pipeline_mode(text.substr(std::string(kPipelinePrefix).size()), "scenario.name");
    const auto& request = scenario.parameters.request;
    scenario.name = request ? request->name : loadgen::Scenario::kConcurrency;
  } else {
    scenario.name = loadgen::parse_scenario(text, "scenario.name");
  }
}

}  // namespace infermark::result

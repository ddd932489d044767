#include "result/cell_json.hpp"

#include <fstream>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "result/scenario_record.hpp"

namespace infermark::result {
namespace {

using nlohmann::json;

}  // namespace

json scenario_json(const loadgen::ScenarioSpec& s) {
  return {{"name", loadgen::name_of(s.name)},
          {"concurrency", s.concurrency},
          {"warmup_queries", s.warmup_queries},
          {"warmup_s", s.warmup_s},
          {"min_queries", s.min_queries},
          {"min_duration_s", s.min_duration_s},
          {"max_queries", s.max_queries},
          {"max_duration_s", s.max_duration_s},
          {"qps", s.qps},
          {"arrivals", loadgen::name_of(s.arrivals)},
          {"pacing", loadgen::name_of(s.pacing)},
          {"duration_s", s.duration_s},
          {"sla_p99_ms", s.sla_p99_ms},
          {"ttft_ms", s.ttft_ms},
          {"tpot_ms", s.tpot_ms},
          {"find_max_qps", s.find_max_qps},
          {"max_queue", s.max_queue},
          {"seed", s.seed},
          {"ramp_by", loadgen::name_of(s.ramp_by)},
          {"ramp_step", s.ramp_step},
          {"ramp_start", s.ramp_start},
          {"ramp_steps", s.ramp_steps},
          {"until_saturation", s.until_saturation},
          {"step_duration_s", s.step_duration_s},
          {"capacity_probe_s", s.capacity_probe_s},
          {"soak_share", s.soak_share},
          {"soak_duration_s", s.soak_duration_s},
          {"soak_interval_s", s.soak_interval_s},
          {"pulse_baseline_share", s.pulse_baseline_share},
          {"pulse_burst_share", s.pulse_burst_share},
          {"pulse_baseline_s", s.pulse_baseline_s},
          {"pulse_burst_s", s.pulse_burst_s},
          {"pulse_recovery_s", s.pulse_recovery_s},
          {"prompt_tokens", s.prompt_tokens},
          {"prompt_tokens_stddev", s.prompt_tokens_stddev},
          {"output_tokens", s.output_tokens},
          {"output_tokens_stddev", s.output_tokens_stddev},
          {"shared_prefix_groups", s.shared_prefix.groups},
          {"shared_prefix_tokens", s.shared_prefix.tokens},
          {"trace_file", s.trace.file},
          {"trace_format", s.trace.format ? std::string(loadgen::name_of(*s.trace.format)) : "auto"},
          {"trace_speed", s.trace.speed},
          {"trace_requests", s.trace.max_requests},
          {"dataset", s.dataset},
          {"conversation_turns", s.conversation.turns},
          {"think_s", s.conversation.think_s},
          {"think_stddev_s", s.conversation.think_stddev_s}};
}

json to_json(const CellRequest& c) {
  json shapes = json::object();
  for (const auto& [name, shape] : c.inputs.shape_overrides) shapes[name] = shape;
  json ranges = json::object();
  for (const auto& [name, range] : c.inputs.varying.ranges) ranges[name] = format_shape_range(range);
  return {{"backend", c.backend},
          {"model", c.model.string()},
          {"remote", c.remote},
          {"isolation", c.isolation},
          {"outputs_dir", c.outputs_dir.string()},
          {"perplexity_text", c.perplexity_text.string()},
          {"perplexity_window", c.perplexity_window},
          {"sessions", name_of(c.sessions)},
          {"options",
           {{"intra_op_threads", c.options.intra_op_threads},
            {"inter_op_threads", c.options.inter_op_threads},
            {"device", c.options.device},
            {"precision", c.options.precision},
            {"expected_concurrency", c.options.expected_concurrency},
            {"artifacts_dir", c.options.artifacts_dir},
            {"extras", c.options.extras}}},
          {"inputs",
           {{"batch", c.inputs.batch},
            {"shape_overrides", shapes},
            {"files", c.inputs.files},
            {"seed", c.inputs.seed},
            {"int_high", c.inputs.int_high},
            {"int_ranges", c.inputs.int_ranges},
            {"shape_ranges", ranges},
            {"shape_sets", c.inputs.varying.sets}}},
          {"scenario", scenario_json(c.scenario)}};
}

CellRequest cell_from_json(const json& j) {
  try {
    CellRequest c;
    c.backend = j.at("backend");
    c.model = j.at("model").get<std::string>();
    c.isolation = j.at("isolation");
    c.outputs_dir = j.at("outputs_dir").get<std::string>();
    c.sessions = parse_session_sharing(j.value("sessions", "shared"), "sessions");
    if (j.contains("remote")) c.remote = j["remote"];
    c.perplexity_text = j.value("perplexity_text", "");
    c.perplexity_window = j.value("perplexity_window", 256);
    const auto& o = j.at("options");
    c.options = {o.at("intra_op_threads"),     o.at("inter_op_threads"), o.at("device"), o.at("precision"),
                 o.at("expected_concurrency"), o.at("artifacts_dir"),    o.at("extras")};
    const auto& i = j.at("inputs");
    c.inputs.batch = i.at("batch");
    for (const auto& [name, shape] : i.at("shape_overrides").items())
      c.inputs.shape_overrides[name] = shape.get<std::vector<std::int64_t>>();
    c.inputs.files = i.at("files").get<std::map<std::string, std::string>>();
    c.inputs.seed = i.at("seed");
    c.inputs.int_high = i.at("int_high");
    c.inputs.int_ranges = i.at("int_ranges").get<std::map<std::string, std::pair<std::int64_t, std::int64_t>>>();
    const auto ranges = i.value("shape_ranges", json::object());
    for (const auto& [name, range] : ranges.items())
      c.inputs.varying.ranges[name] = parse_shape_range(range.get<std::string>(), "cell request shape range of " + name);
    c.inputs.varying.sets = i.value("shape_sets", c.inputs.varying.sets);
    c.scenario = scenario_request_from(j.at("scenario"), "scenario");
    return c;
  } catch (const json::exception& e) {
    throw Error(std::string("malformed cell request: ") + e.what());
  }
}

void write_cell(const CellRequest& cell, const std::filesystem::path& path) {
  std::ofstream out(path);
  out << json_text(to_json(cell), 2) << '\n';
  if (!out) throw Error(path.string() + ": cannot write the cell request");
}

CellRequest read_cell(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot read the cell request");
  try {
    return cell_from_json(json::parse(in));
  } catch (const json::parse_error& e) {
    throw Error(path.string() + ": " + e.what());
  }
}

}  // namespace infermark::result

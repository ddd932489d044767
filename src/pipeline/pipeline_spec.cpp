#include "pipeline/pipeline_spec.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/named_enum.hpp"
#include "pipeline/pipeline_message.hpp"

namespace infermark::pipeline {
namespace {

constexpr NamedValue<Handoff> kHandoffs[] = {{Handoff::kDirect, "direct"}, {Handoff::kTextCrops, "text-crops"}};

}  // namespace

std::string_view name_of(Handoff handoff) { return name_in(kHandoffs, handoff); }

Handoff parse_handoff(const std::string& text, const std::string& what) { return parse_in(kHandoffs, text, what); }

StageInputs stage_inputs(const PipelineSpec& spec, std::size_t k) {
  if (k == 0) return {spec.inputs, std::nullopt};
  StageInputs stage;
  stage.fed_by = spec.handoff;
  stage.request.batch = spec.inputs.batch;
  stage.request.seed = spec.inputs.seed;
  if (spec.handoff == Handoff::kTextCrops) {
    // The recogniser is bound at the size the crops come in (channels as the image's: 3).
    const auto& c = spec.text_crops;
    stage.request.batch = c.max_lines;
    stage.first_input_shape = std::vector<std::int64_t>{c.max_lines, 3, c.line_height, c.line_width};
  }
  return stage;
}

nlohmann::json to_json(const StageInputs& inputs) {
  return {{"batch", inputs.request.batch},
          {"seed", inputs.request.seed},
          {"files", inputs.request.files},
          {"first_input_shape", inputs.first_input_shape ? nlohmann::json(*inputs.first_input_shape) : nlohmann::json()},
          {"fed_by", name_of(inputs.fed_by)}};
}

StageInputs stage_inputs_from_json(const nlohmann::json& j, const std::string& source) {
  StageInputs inputs;
  inputs.request.batch = j.at("batch");
  inputs.request.seed = j.at("seed");
  inputs.request.files = j.at("files").get<std::map<std::string, std::string>>();
  if (!j.at("first_input_shape").is_null()) inputs.first_input_shape = j.at("first_input_shape").get<std::vector<std::int64_t>>();
  inputs.fed_by = parse_handoff(j.at("fed_by"), source + ": inputs.fed_by");
  return inputs;
}

std::optional<TextCropSettings> crops_after(const PipelineSpec& spec, std::size_t k) {
  if (spec.handoff == Handoff::kTextCrops && k == 0) return spec.text_crops;
  return std::nullopt;
}

void validate(const PipelineSpec& spec, const std::string& source) {
  auto fail = [&](const std::string& why) { throw Error(source + ": " + why); };
  if (spec.stages.size() < 2) fail("a pipeline needs at least two stages (found " + std::to_string(spec.stages.size()) + ")");
  if (spec.stages.size() > static_cast<std::size_t>(kMaxStages)) fail("at most " + std::to_string(kMaxStages) + " stages");
  for (const auto& stage : spec.stages) {
    if (stage.model.empty()) fail("stage '" + stage.name + "' has no model");
    if (stage.backend.empty()) fail("stage '" + stage.name + "' has no backend");
  }
  if (spec.handoff == Handoff::kTextCrops) {
    const auto& c = spec.text_crops;
    if (spec.stages.size() != 2) fail("handoff text-crops joins two stages, a detector and a recogniser");
    if (c.max_lines < 1 || c.line_height < 1 || c.line_width < 1)
      fail("text_crops: max_lines, line_height and line_width must be positive");
    if (c.threshold <= 0 || c.threshold >= 1) fail("text_crops: threshold must lie in (0, 1)");
    if (c.unclip_ratio < 0) fail("text_crops: unclip_ratio must not be negative");
  }
  if (spec.text_check && spec.handoff != Handoff::kTextCrops)
    fail("text_check needs handoff text-crops (it decodes recognised lines)");
  if (!spec.inputs.files.empty() && spec.inputs.batch != 1)
    fail("batch applies to seeded inputs; with 'input' each request takes one sample of the file (drop 'batch')");
  if (spec.text_check && spec.inputs.files.empty()) fail("text_check needs an 'input' file: the labels describe its images");
  if (spec.modes.empty()) fail("no modes (known: serial, threads, processes)");
  if (spec.requests < 1) fail("requests must be at least 1");
  if (spec.warmup < 0) fail("warmup must not be negative");
  if (spec.queue_depth < 1) fail("queue_depth must be at least 1");
  if (spec.timeout_ms < 0) fail("timeout_ms must not be negative (0 = no timeout)");
  if (spec.breaker_after < 0) fail("breaker_after must not be negative (0 = never opens)");
  if (spec.breaker_cooldown_ms < 0) fail("breaker_cooldown_ms must not be negative");
  if (spec.inputs.batch < 1) fail("batch must be at least 1");
}

nlohmann::json to_json(const StageSpec& stage) {
  return {{"name", stage.name},
          {"model", stage.model.string()},
          {"backend", stage.backend},
          {"intra_op_threads", stage.options.intra_op_threads},
          {"inter_op_threads", stage.options.inter_op_threads},
          {"device", stage.options.device},
          {"precision", stage.options.precision},
          {"extras", stage.options.extras}};
}

StageSpec stage_from_json(const nlohmann::json& j) {
  StageSpec stage;
  stage.name = j.at("name");
  stage.model = j.at("model").get<std::string>();
  stage.backend = j.at("backend");
  stage.options.intra_op_threads = j.at("intra_op_threads");
  stage.options.inter_op_threads = j.at("inter_op_threads");
  stage.options.device = j.at("device");
  stage.options.precision = j.at("precision");
  stage.options.extras = j.at("extras").get<std::map<std::string, std::string>>();
  return stage;
}

nlohmann::json to_json(const PipelineSpec& spec) {
  auto stages = nlohmann::json::array();
  for (const auto& s : spec.stages) stages.push_back(to_json(s));
  nlohmann::json out{{"name", spec.name},
                     {"description", spec.description},
                     {"stages", stages},
                     {"handoff", name_of(spec.handoff)},
                     {"modes", spec.modes},
                     {"requests", spec.requests},
                     {"warmup", spec.warmup},
                     {"queue_depth", spec.queue_depth},
                     {"timeout_ms", spec.timeout_ms},
                     {"breaker_after", spec.breaker_after},
                     {"breaker_cooldown_ms", spec.breaker_cooldown_ms},
                     {"batch", spec.inputs.batch},
                     {"seed", spec.inputs.seed}};
  if (spec.handoff == Handoff::kTextCrops) out["text_crops"] = to_json(spec.text_crops);
  if (!spec.inputs.files.empty()) out["input"] = spec.inputs.files;
  if (spec.text_check) out["text_check"] = to_json(*spec.text_check);
  return out;
}

}  // namespace infermark::pipeline

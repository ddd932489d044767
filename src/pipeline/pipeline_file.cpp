#include "pipeline/pipeline_file.hpp"

#include <set>

#include "backends/declared.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"

namespace infermark::pipeline {
namespace {

StageSpec parse_stage(const YAML::Node& node, std::size_t index, const std::string& file) {
  const auto where = file + ": stage " + std::to_string(index + 1);
  if (!node.IsMap()) throw Error(where + ": a stage maps model, backend and threads");
  check_keys(node, {"name", "model", "backend", "threads", "inter-threads", "precision", "opt"}, where);
  StageSpec stage;
  stage.name = yaml_value<std::string>(node, "name", "stage" + std::to_string(index + 1), where);
  stage.model = yaml_value<std::string>(node, "model", "", where);
  stage.backend = yaml_value<std::string>(node, "backend", "", where);
  if (stage.model.empty()) throw Error(where + ": no 'model'");
  if (stage.backend.empty()) throw Error(where + ": no 'backend'");
  declared_backends().check_known(stage.backend);
  stage.options.intra_op_threads = yaml_value<int>(node, "threads", 0, where);
  stage.options.inter_op_threads = yaml_value<int>(node, "inter-threads", 0, where);
  if (stage.options.intra_op_threads < 0) throw Error(where + ": 'threads' must not be negative (0 = framework default)");
  stage.options.precision = yaml_value<std::string>(node, "precision", "fp32", where);
  stage.options.extras = yaml_options(node, "opt", where);
  return stage;
}

TextCropSettings parse_text_crops(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap())
    throw Error(where +
                ": maps the crop settings (threshold, box_score, unclip_ratio, min_side, max_lines, line_height, line_width)");
  check_keys(node, {"threshold", "box_score", "unclip_ratio", "min_side", "max_lines", "line_height", "line_width"}, where);
  TextCropSettings c;
  c.threshold = yaml_value<double>(node, "threshold", c.threshold, where);
  c.box_score = yaml_value<double>(node, "box_score", c.box_score, where);
  c.unclip_ratio = yaml_value<double>(node, "unclip_ratio", c.unclip_ratio, where);
  c.min_side = yaml_value<int>(node, "min_side", c.min_side, where);
  c.max_lines = yaml_value<int>(node, "max_lines", c.max_lines, where);
  c.line_height = yaml_value<int>(node, "line_height", c.line_height, where);
  c.line_width = yaml_value<int>(node, "line_width", c.line_width, where);
  return c;
}

PipelineSpec pipeline_from(const YAML::Node& root, const std::filesystem::path& file) {
  const auto where = file.string();
  if (!root.IsMap() || !root["pipeline"]) throw Error(where + ": a pipeline file is a YAML mapping with a 'pipeline:' section");
  check_keys(root,
             {"name", "description", "pipeline", "modes", "requests", "warmup", "queue_depth", "batch", "seed", "timeout_ms",
              "breaker_after", "breaker_cooldown_ms", "input", "text_check"},
             where);
  PipelineSpec spec;
  spec.name = yaml_value<std::string>(root, "name", file.stem().string(), where);
  spec.description = yaml_value<std::string>(root, "description", "", where);
  const auto section = root["pipeline"];
  if (!section.IsMap()) throw Error(where + ": 'pipeline' maps 'stages' (a list) and 'handoff'");
  check_keys(section, {"stages", "handoff", "text_crops"}, where + ": pipeline");
  spec.handoff = parse_handoff(yaml_value<std::string>(section, "handoff", "direct", where), where + ": pipeline: handoff");
  if (section["text_crops"]) spec.text_crops = parse_text_crops(section["text_crops"], where + ": pipeline: text_crops");
  if (!section["stages"] || !section["stages"].IsSequence()) throw Error(where + ": pipeline: 'stages' must be a list of stages");
  for (std::size_t i = 0; i < section["stages"].size(); ++i) spec.stages.push_back(parse_stage(section["stages"][i], i, where));
  if (root["modes"]) {
    spec.modes.clear();
    const auto mode_of = [&](const YAML::Node& node) {
      return result::parse_pipeline_mode(yaml_scalar(node, where + ": modes"), where + ": modes: mode");
    };
    if (!root["modes"].IsSequence())
      spec.modes.push_back(mode_of(root["modes"]));
    else
      for (const auto& m : root["modes"]) spec.modes.push_back(mode_of(m));
  }
  spec.requests = yaml_value<int>(root, "requests", spec.requests, where);
  spec.warmup = yaml_value<int>(root, "warmup", spec.warmup, where);
  spec.queue_depth = yaml_value<int>(root, "queue_depth", spec.queue_depth, where);
  spec.inputs.batch = yaml_value<std::int64_t>(root, "batch", spec.inputs.batch, where);
  spec.inputs.seed = yaml_value<std::uint64_t>(root, "seed", spec.inputs.seed, where);
  spec.timeout_ms = yaml_value<double>(root, "timeout_ms", spec.timeout_ms, where);
  spec.breaker_after = yaml_value<int>(root, "breaker_after", spec.breaker_after, where);
  spec.breaker_cooldown_ms = yaml_value<double>(root, "breaker_cooldown_ms", spec.breaker_cooldown_ms, where);
  if (root["input"]) spec.inputs.files = yaml_options(root, "input", where);
  if (root["text_check"]) {
    const auto check = root["text_check"];
    const auto check_where = where + ": text_check";
    if (!check.IsMap()) throw Error(check_where + ": maps 'labels' and 'characters' (files)");
    check_keys(check, {"labels", "characters"}, check_where);
    spec.text_check = TextCheckSpec{yaml_value<std::string>(check, "labels", "", check_where),
                                    yaml_value<std::string>(check, "characters", "", check_where)};
    if (spec.text_check->labels.empty() || spec.text_check->characters.empty())
      throw Error(check_where + ": needs both 'labels' and 'characters'");
  }
  validate(spec, where);
  return spec;
}

}  // namespace

bool is_pipeline_file(const std::filesystem::path& file) {
  try {
    const auto root = load_yaml_file(file, "pipeline file");
    return root.IsMap() && root["pipeline"];
  } catch (const Error&) {
    return false;
  }
}

PipelineSpec load_pipeline_file(const std::filesystem::path& file) {
  return pipeline_from(load_yaml_file(file, "pipeline file"), file);
}

PipelineSpec parse_pipeline(const std::string& yaml, const std::filesystem::path& file) {
  return pipeline_from(parse_yaml_text(yaml, file.string()), file);
}

void apply_overrides(const PipelineOverrides& o, PipelineSpec& spec, const std::string& source) {
  if (!o.modes.empty()) spec.modes = o.modes;
  if (o.requests > 0) spec.requests = o.requests;
  if (o.warmup >= 0) spec.warmup = o.warmup;
  if (o.queue_depth > 0) spec.queue_depth = o.queue_depth;
  if (o.timeout_ms >= 0) spec.timeout_ms = o.timeout_ms;
  if (o.breaker_after >= 0) spec.breaker_after = o.breaker_after;
  validate(spec, source);
}

}  // namespace infermark::pipeline

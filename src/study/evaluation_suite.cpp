#include "study/evaluation_suite.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "probes/environment.hpp"
#include "study/study_yaml.hpp"

namespace infermark::study {
namespace {

std::optional<double> positive_limit(const YAML::Node& node, const std::string& key, const std::string& file) {
  const auto text = scalar(node, key, file);
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && value > 0) return value;
  } catch (const std::exception&) {}
  throw Error(origin(file, node) + ": decision '" + key + "' must be a positive number, not '" + text + "'");
}

// decision: {p99-ms: 100, min-qps: 20, mem-mb: 2048, max-accuracy-loss: 2}
DecisionLimits decision_limits(const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) throw Error(origin(file, node) + ": 'decision' maps recommend's limits to numbers");
  DecisionLimits limits;
  for (const auto& kv : node) {
    const auto key = scalar(kv.first, "decision key", file);
    const auto value = positive_limit(kv.second, key, file);
    if (key == "p99-ms")
      limits.p99_ms = value;
    else if (key == "min-qps")
      limits.min_qps = value;
    else if (key == "mem-mb")
      limits.mem_mb = value;
    else if (key == "max-accuracy-loss")
      limits.max_accuracy_loss_pct = value;
    else
      throw Error(origin(file, kv.first) + ": unknown decision limit '" + key + "' (p99-ms, min-qps, mem-mb, max-accuracy-loss)");
  }
  return limits;
}

QuickOverrides quick_overrides(const YAML::Node& node, const std::string& file, const std::function<int()>& physical_cores) {
  if (!node.IsMap())
    throw Error(origin(file, node) + ": 'quick' is 'skip' or a mapping of models, backends, base, axes, requests");
  QuickOverrides quick;
  for (const auto& kv : node) {
    const auto key = scalar(kv.first, "quick key", file);
    if (key == "models") {
      quick.models = scalars(kv.second, "models", file).values;
    } else if (key == "backends") {
      quick.backends = scalars(kv.second, "backends", file).values;
    } else if (key == "base") {
      std::map<std::string, std::string> origins;
      read_base(kv.second, file, quick.base, origins);
    } else if (key == "axes") {
      quick.axes = read_axes(kv.second, file, physical_cores);
    } else if (key == "requests") {
      const auto text = scalar(kv.second, "requests", file);
      try {
        std::size_t used = 0;
        const int requests = std::stoi(text, &used);
        if (used == text.size() && requests > 0) quick.requests = requests;
      } catch (const std::exception&) {}
      if (!quick.requests)
        throw Error(origin(file, kv.second) + ": quick 'requests' must be a positive count, not '" + text + "'");
    } else {
      throw Error(origin(file, kv.first) + ": unknown key '" + key + "' in 'quick' (models, backends, base, axes, requests)");
    }
  }
  return quick;
}

Experiment experiment_from(const YAML::Node& node, const std::filesystem::path& file,
                           const std::function<int()>& physical_cores) {
  const auto where = file.string();
  if (!node.IsMap()) throw Error(origin(where, node) + ": an experiment is a mapping with title and study");
  Experiment experiment;
  experiment.origin = origin(where, node);
  for (const auto& kv : node) {
    const auto key = scalar(kv.first, "experiment key", where);
    if (key == "title") {
      experiment.title = scalar(kv.second, "title", where);
    } else if (key == "study") {
      experiment.file = (file.parent_path() / scalar(kv.second, "study", where)).lexically_normal();
    } else if (key == "zoo") {
      experiment.zoo = scalars(kv.second, "zoo", where).values;
    } else if (key == "quick") {
      if (kv.second.IsScalar()) {
        if (kv.second.as<std::string>() != "skip")
          throw Error(origin(where, kv.second) + ": 'quick' is 'skip' or a mapping of models, backends, base, axes, requests");
        experiment.in_quick = false;
      } else {
        experiment.quick = quick_overrides(kv.second, where, physical_cores);
      }
    } else {
      throw Error(origin(where, kv.first) + ": unknown key '" + key + "' (an experiment has title, study, zoo, quick)");
    }
  }
  if (experiment.title.empty()) throw Error(experiment.origin + ": the experiment has no 'title'");
  if (experiment.file.empty()) throw Error(experiment.origin + ": the experiment has no 'study' (a study or pipeline file)");
  return experiment;
}

}  // namespace

EvaluationSuite parse_evaluation_suite(const std::string& yaml, const std::filesystem::path& file) {
  const auto where = file.string();
  const auto root = parse_yaml_text(yaml, where);
  if (!root.IsMap()) throw Error(where + ": an evaluation suite is a YAML mapping with name and experiments");
  check_keys(root, {"name", "description", "experiments", "decision"}, where);
  const auto physical_cores = [] { return probes::capture_environment().physical_cores; };
  EvaluationSuite suite;
  suite.file = file;
  suite.name = root["name"] ? scalar(root["name"], "name", where) : file.stem().string();
  suite.description = root["description"] ? scalar(root["description"], "description", where) : "";
  if (!root["experiments"] || !root["experiments"].IsSequence() || root["experiments"].size() == 0)
    throw Error(where + ": 'experiments' must list at least one {title, study}");
  for (const auto& node : root["experiments"]) suite.experiments.push_back(experiment_from(node, file, physical_cores));
  if (root["decision"]) suite.decision = decision_limits(root["decision"], where);
  return suite;
}

EvaluationSuite load_evaluation_suite(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot read this evaluation suite");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_evaluation_suite(text.str(), file);
}

Study with_quick_overrides(Study study, const Experiment& experiment) {
  const auto& quick = experiment.quick;
  if (quick.models) study.models = *quick.models;
  if (quick.backends) study.backends = *quick.backends;
  for (const auto& [flag, value] : quick.base) {
    study.base[flag] = value;
    study.base_origins[flag] = experiment.origin + " (quick)";
  }
  for (const auto& axis : quick.axes) {
    auto found = std::find_if(study.axes.begin(), study.axes.end(), [&](const StudyAxis& a) { return a.flag == axis.flag; });
    if (found == study.axes.end())
      throw Error(axis.origins.front() + ": quick axis '" + axis.flag + "' is not an axis of " + study.file.string());
    *found = axis;
  }
  return study;
}

}  // namespace infermark::study

// An evaluation suite: the experiments a team runs to choose a framework (headline latency and
// throughput, memory of many instances, dynamic shapes, threads, precision, kernel fusion, a
// pipeline), each an existing study or pipeline file, run one after another by `infermark
// evaluate` into one folder and one report that ends in a decision. `--quick` applies each
// experiment's `quick:` overrides (fewer runs, fewer axis values, smaller models) or leaves it out.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/study_file.hpp"

namespace infermark::study {

// What --quick changes in an experiment; every field is optional.
struct QuickOverrides {
  std::optional<std::vector<std::string>> models;    // replaces the study's models
  std::optional<std::vector<std::string>> backends;  // replaces the study's backends
  std::map<std::string, std::string> base;           // merged into the study's base flags
  std::vector<StudyAxis> axes;                       // replaces the values of axes the study has
  std::optional<int> requests;                       // a pipeline experiment's timed requests
};

struct Experiment {
  std::string title;
  std::filesystem::path file;    // the study or pipeline file, resolved against the suite's folder
  std::vector<std::string> zoo;  // zoo catalog names built first when one of the models is missing
  bool in_quick = true;          // `quick: skip` leaves the experiment out of --quick
  QuickOverrides quick;
  std::string origin;  // "file:line:column" of the entry, for errors
};

// The constraints of the closing decision (`infermark recommend`'s flags of the same names).
struct DecisionLimits {
  std::optional<double> p99_ms;
  std::optional<double> min_qps;
  std::optional<double> mem_mb;
  std::optional<double> max_accuracy_loss_pct;
};

struct EvaluationSuite {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<Experiment> experiments;
  DecisionLimits decision;
};

// Throws infermark::Error naming the file, with the line and column of what is wrong (unknown
// key, an experiment without a title or file, a quick override of an unknown kind).
EvaluationSuite parse_evaluation_suite(const std::string& yaml, const std::filesystem::path& file);
EvaluationSuite load_evaluation_suite(const std::filesystem::path& file);

// The study as --quick runs it. Throws infermark::Error naming the override's origin when it
// names an axis the study does not have.
Study with_quick_overrides(Study study, const Experiment& experiment);

}  // namespace infermark::study

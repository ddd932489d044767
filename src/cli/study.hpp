// Studies: a YAML file naming models, backends and axes; its cells are the cross product of
// the axes, each a set of `run` flags, so a study accepts exactly what `infermark run` accepts.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/run_options.hpp"

namespace infermark::cli {

struct StudyAxis {
  std::string flag;                 // a `run` flag without dashes: threads, batch, shape, opt, ...
  std::vector<std::string> values;
};

struct Study {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<std::string> models;    // paths relative to the working folder
  std::vector<std::string> backends;  // empty: every built backend that reads the model
  std::map<std::string, std::string> base;  // flags applied to every cell
  std::vector<StudyAxis> axes;
};

// Throws infermark::Error naming the file, and the line and column for YAML syntax errors.
Study load_study(const std::filesystem::path& file);

struct StudyCell {
  std::string model;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> settings;  // axis flag -> value, in axis order
  std::string name;                                           // stable file stem, for resuming
};

// Every (model, backend, axis values) combination, in a stable order.
std::vector<StudyCell> expand(const Study& study, const std::vector<std::string>& available_backends);

// The `run` options of a cell: the study's base flags, then the cell's settings, parsed by the
// same flag definitions and checks as `infermark run`. Throws infermark::Error naming the cell.
RunOptions cell_options(const Study& study, const StudyCell& cell);

}  // namespace infermark::cli

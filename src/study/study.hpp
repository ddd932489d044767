// Studies: a YAML file naming models, backends and axes; its cells are the cross product of
// the axes, each a set of `run` flags, so a study accepts exactly what `infermark run` accepts.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loadgen/scenario.hpp"
#include "result/run_result.hpp"
#include "study/config_search.hpp"
#include "study/study_file.hpp"

namespace infermark::study {

// Throws infermark::Error naming the file, with the line and column of the YAML syntax error or
// of the value that is wrong (unknown key or backend, a list where a value belongs, no values).
Study load_study(const std::filesystem::path& file);

// The same from YAML text; `file` names the study in errors and gives its default name. Threads
// given as a multiple of the cores count this machine's.
Study parse_study(const std::string& yaml, const std::filesystem::path& file);

struct StudyCell {
  std::string model;                                          // a model file, or a server's URL
  std::string backend;                                        // "remote" for a server
  std::vector<std::pair<std::string, std::string>> settings;  // axis flag -> value, in axis order
  std::string name;                                           // stable file stem, for resuming
  std::vector<std::string> origins;                           // "file:line:column" of each setting
  std::optional<StudyServer> server;                          // set for a server's cells
};

// Every (model, backend, axis values) combination, in a stable order: models, then backends,
// then the axes as an odometer with the first axis turning fastest.
std::vector<StudyCell> expand(const Study& study, const std::vector<std::string>& available_backends);

// "threads=2, batch=4" (axis order), or "-" for a cell without axes.
std::string settings_text(const StudyCell& cell);

// The guided search's view of the axes: their sizes, and ordered where every value is a number.
std::vector<SearchAxis> search_axes(const Study& study);

// A measured cell as the guided search scores it: measured when ok with a latency and throughput.
PointScore score_of(const result::RunResult& result);

// Upper bound of one cell's time: the scenario's planned length plus loading and warm-up.
double cell_estimate_s(const loadgen::ScenarioSpec& scenario);

// Where a sweep keeps the study's results: <out>/study-<name>, stable so a rerun resumes.
std::filesystem::path study_folder(const std::filesystem::path& out, const Study& study);

// The Markdown heading of the study's summary.md: its name and description.
std::string summary_header(const Study& study);

}  // namespace infermark::study

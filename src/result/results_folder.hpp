// Where a command's result files go: a fresh folder per run, named by its start time (run, load,
// serve), or the one stable folder a study or pipeline keeps across reruns (sweep, pipeline).
#pragma once

#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace infermark::result {

// "resnet50", or "resnet50-and-2-more" for several models: what a run's folder is named after.
std::string models_label(const std::vector<std::string>& models);

// "20260105-142501-<label>": the run's local start time, then what it measured.
std::string results_folder_name(const std::string& label, std::time_t started);

// Creates <out>/<results_folder_name>, or the first free of -2, -3, ... after it, and returns it:
// creating a directory is atomic, so two runs started in the same second (in one process or
// several) never share a folder and never overwrite each other's results. Throws infermark::Error
// naming `flag` (the flag that chose `out`) when the folder cannot be created.
std::filesystem::path create_results_folder(const std::filesystem::path& out, const std::string& label, std::time_t started,
                                            std::string_view flag = "--out");

// <out>/<kind>-<name>, e.g. results/study-small: the folder a study or pipeline reruns into (a
// sweep resumes from the results it holds), so it is the same every time.
std::filesystem::path stable_results_folder(const std::filesystem::path& out, std::string_view kind, const std::string& name);

}  // namespace infermark::result

// Study files parsed from their YAML text: models, backends, servers, base flags and axes, each
// value with its "file:line:column". No I/O: the caller reads the file and says how many physical
// cores a "1.5x" thread count means.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace infermark::study {

struct StudyAxis {
  std::string flag;  // a `run` flag without dashes: threads, batch, shape, opt, ...
  std::vector<std::string> values;
  std::vector<std::string> origins;  // "file:line:column" of each value, for errors
};

// A remote server the study measures with `infermark load`'s client: one more column beside the
// backends, under every axis (scenario, concurrency, qps, shape, ...).
struct StudyServer {
  std::string url;                  // as `load` takes it (kserve-grpc: HOST:PORT)
  std::string protocol = "kserve";  // `load --protocol`
  std::string model;                // the served model's name
  std::string origin;               // "file:line:column" of the entry
};

struct Study {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<std::string> models;                  // paths relative to the working folder
  std::vector<std::string> backends;                // empty: every built backend that reads the model
  std::vector<StudyServer> servers;                 // remote servers, each measured under every axis
  std::map<std::string, std::string> base;          // flags applied to every cell
  std::map<std::string, std::string> base_origins;  // "file:line:column" of each base value
  std::vector<StudyAxis> axes;
};

// Throws infermark::Error naming `file`, with the line and column of the YAML syntax error or of
// the value that is wrong (unknown key or backend, a list where a value belongs, no values).
// `physical_cores` is called only when a threads value is a multiple of the cores ("1.5x").
Study parse_study(const std::string& yaml, const std::filesystem::path& file, const std::function<int()>& physical_cores);

}  // namespace infermark::study

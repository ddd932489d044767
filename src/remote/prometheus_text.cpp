#include "remote/prometheus_text.hpp"

#include <cstdlib>

namespace infermark::remote {
namespace {

bool wanted(std::string_view name, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return true;
  for (const auto& prefix : prefixes)
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Where the series ends: after the closing brace of its labels (quotes respected), else at a blank.
std::size_t series_end(std::string_view line) {
  const auto brace = line.find('{');
  const auto blank = line.find_first_of(" \t");
  if (brace == std::string_view::npos || (blank != std::string_view::npos && blank < brace)) return blank;
  bool quoted = false;
  for (std::size_t i = brace + 1; i < line.size(); ++i) {
    if (quoted && line[i] == '\\') {
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (!quoted && line[i] == '}') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

const std::vector<std::string>& server_metric_prefixes() {
  static const std::vector<std::string> prefixes{
      "nv_inference_", "nv_cpu_", "nv_gpu_", "llamacpp:", "vllm:", "tgi_", "infermark_"};
  return prefixes;
}

std::vector<MetricSample> parse_prometheus_text(std::string_view text, const std::vector<std::string>& prefixes) {
  std::vector<MetricSample> samples;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    auto line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const auto end = series_end(line);
    if (end == std::string_view::npos || end == 0) continue;
    const auto series = line.substr(0, end);
    const auto name = series.substr(0, series.find('{'));
    if (!wanted(name, prefixes)) continue;
    auto rest = std::string(line.substr(end));
    char* parsed_end = nullptr;
    const double value = std::strtod(rest.c_str(), &parsed_end);
    if (parsed_end == rest.c_str()) continue;  // no number
    samples.push_back({std::string(name), std::string(series), value});
  }
  return samples;
}

}  // namespace infermark::remote

#include "report/comparison_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace infermark::report {
namespace {

struct Column {
  std::string title;
  bool right_aligned;
};

const std::vector<Column> kColumns{
    {"backend", false},  {"version", false},    {"threads", true},    {"mean ms", true}, {"P50 ms", true},
    {"P99 ms", true},    {"inferences/s", true}, {"peak RSS MB", true}, {"max abs err", true},
    {"top-1 agree", true}, {"status", false}};

std::string fixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

// Agreement of the first output with the reference backend's: max abs error and top-1 share.
std::array<std::string, 2> agreement_cells(const RunResult& r) {
  if (!r.cross_check || r.cross_check->outputs.empty()) return {"-", "-"};
  if (r.cross_check->is_reference) return {"(reference)", "(reference)"};
  const auto& first = r.cross_check->outputs.front();
  if (!first.comparable) return {"not comparable", "-"};
  return {fmt::format("{:.2e}", first.max_abs_error),
          first.top1_agreement ? fmt::format("{:.1f}%", *first.top1_agreement * 100) : std::string("-")};
}

std::vector<std::string> row_for(const RunResult& r) {
  const auto threads = effective_setting(r, "intra_op_threads");
  std::vector<std::string> row{r.backend.name, r.backend.version.empty() ? "-" : r.backend.version,
                               threads.empty() ? "-" : threads};
  if (r.latency_ms) {
    row.push_back(fixed(r.latency_ms->mean, 3));
    row.push_back(fixed(r.latency_ms->at(50).value, 3));
    row.push_back(fixed(r.latency_ms->at(99).value, 3));
    row.push_back(fixed(r.throughput.inferences_per_s, 1));
  } else {
    row.insert(row.end(), 4, "-");
  }
  row.push_back(r.memory.peak_rss_mb > 0 ? fixed(r.memory.peak_rss_mb, 0) : "-");
  const auto agreement = agreement_cells(r);
  row.insert(row.end(), agreement.begin(), agreement.end());
  row.push_back(r.status);
  return row;
}

// Version strings such as OpenVINO's build number are long; the full one is in the JSON.
std::string shorten(std::string text, std::size_t width) {
  if (text.size() > width) text = text.substr(0, width - 1) + "~";
  return text;
}

}  // namespace

std::string effective_setting(const RunResult& result, const std::string& key) {
  for (const auto& s : result.effective_settings)
    if (s.key == key) return s.effective;
  return "";
}

std::string comparison_table(const std::vector<RunResult>& results) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    rows.push_back(row_for(r));
    rows.back()[1] = shorten(rows.back()[1], 24);
  }
  std::vector<std::size_t> widths;
  for (const auto& c : kColumns) widths.push_back(c.title.size());
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());

  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (std::size_t i = 0; i < cells.size(); ++i)
      out += kColumns[i].right_aligned ? fmt::format(" {:>{}} |", cells[i], widths[i]) : fmt::format(" {:<{}} |", cells[i], widths[i]);
    return out + "\n";
  };
  std::vector<std::string> titles, rule;
  for (std::size_t i = 0; i < kColumns.size(); ++i) {
    titles.push_back(kColumns[i].title);
    rule.push_back(std::string(widths[i], '-'));
  }
  std::string table = line(titles) + line(rule);
  for (const auto& row : rows) table += line(row);
  for (const auto& r : results)
    if (!r.error.empty()) table += fmt::format("  {}\n", r.error);
  for (const auto& r : results)
    if (r.cross_check && !r.cross_check->is_reference)
      for (const auto& o : r.cross_check->outputs)
        if (!o.comparable) table += fmt::format("  {}: output '{}' not comparable: {}\n", r.backend.name, o.output, o.note);
  return table;
}

}  // namespace infermark::report

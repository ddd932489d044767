#include "report/markdown_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/json_text.hpp"
#include "core/markdown_table.hpp"
#include "report/ab_table.hpp"
#include "report/comparison_table.hpp"
#include "report/energy_column.hpp"
#include "report/generation_table.hpp"
#include "report/label_accuracy_column.hpp"
#include "report/machine.hpp"
#include "report/relative_speed.hpp"
#include "report/zoo_accuracy.hpp"

namespace infermark::report {
namespace {

using Row = std::vector<std::string>;

// First column left (names), the others right-aligned (figures); a blank line after.
std::string table(const Row& header, const std::vector<Row>& rows) {
  std::vector<MarkdownColumn> columns;
  for (std::size_t i = 0; i < header.size(); ++i) columns.push_back({header[i], i > 0});
  return markdown_table(columns, rows) + "\n";
}

std::string ms(double v) { return fmt::format("{:.2f}", v); }
std::string dash_or(bool present, const std::function<std::string()>& value) { return present ? value() : "-"; }

std::string p50(const result::RunResult& r) {
  return dash_or(r.latency_ms.has_value(), [&] { return ms(r.latency_ms->at(50).value); });
}
std::string p99(const result::RunResult& r) {
  return dash_or(r.latency_ms.has_value(), [&] { return ms(r.latency_ms->at(99).value); });
}
std::string throughput(const result::RunResult& r) {
  return dash_or(r.throughput.inferences_per_s > 0, [&] { return fmt::format("{:.1f}", r.throughput.inferences_per_s); });
}
std::string memory(const result::RunResult& r) {
  return dash_or(r.memory.peak_rss_mb > 0, [&] { return fmt::format("{:.0f}", r.memory.peak_rss_mb); });
}

// Energy per inference in millijoules, or why it is missing.
std::string energy_per_inference(const result::RunResult& r) {
  if (!r.resources) return "-";
  if (!r.resources->inferences_per_joule) return "unavailable";
  return fmt::format("{:.2f} mJ", 1000.0 / *r.resources->inferences_per_joule);
}

std::string accuracy(const result::RunResult& r) {
  if (!r.cross_check || r.cross_check->outputs.empty()) return "-";
  if (r.cross_check->is_reference) return "reference";
  const auto& o = r.cross_check->outputs.front();
  if (!o.comparable) return "not comparable";
  return o.top1_agreement ? fmt::format("top-1 {:.1f}%, max err {:.1e}", *o.top1_agreement * 100, o.max_abs_error)
                          : fmt::format("cos {:.5f}, max err {:.1e}", o.cosine_similarity, o.max_abs_error);
}

template <typename Key>
std::set<Key> distinct(const std::vector<LoadedResult>& cells, const std::function<Key(const result::RunResult&)>& key) {
  std::set<Key> keys;
  for (const auto& c : cells) keys.insert(key(c.result));
  return keys;
}

std::string threads_of(const result::RunResult& r) {
  const auto t = effective_setting(r, "intra_op_threads");
  return t.empty() ? "-" : t;
}

// The shapes a cell fed: its fixed shapes, or the ranges it drew from per query (its recorded
// inputs are only the first draw, which does not describe the cell).
std::string shape_of(const result::RunResult& r) {
  std::string out;
  if (const auto& varying = r.scenario.parameters.varying_shapes) {
    for (const auto& [name, range] : varying->ranges) out += (out.empty() ? "" : ", ") + range;
    return out + " (drawn per query)";
  }
  for (const auto& t : r.scenario.inputs) out += (out.empty() ? "" : ", ") + format_shape(t.shape);
  return out.empty() ? "-" : out;
}

std::string mean_and_spread(const result::RunResult& r) {
  return dash_or(r.latency_ms.has_value(), [&] { return ms(r.latency_ms->mean) + " ± " + ms(r.latency_ms->stddev); });
}

// Cells of one model on one machine: the relative column compares them with their fastest.
std::string summary_table(const std::vector<LoadedResult>& cells) {
  std::vector<const result::RunResult*> results;
  for (const auto& c : cells) results.push_back(&c.result);
  const auto speeds = relative_speeds(results);
  const bool energy = any_energy_measured(results);
  const bool labelled = any_label_accuracy(results);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& r = cells[i].result;
    Row row{cell_label(r),
            r.backend.version.empty() ? "-" : r.backend.version,
            mean_and_spread(r),
            p50(r),
            p99(r),
            relative_text(speeds[i]),
            throughput(r),
            memory(r)};
    if (energy) row.push_back(inferences_per_joule_cell(r));
    row.push_back(accuracy(r));
    if (labelled) row.push_back(label_accuracy_cell(r));
    row.push_back(std::string(name_of(r.status)));
    rows.push_back(std::move(row));
  }
  std::vector<MarkdownColumn> columns{{"framework"},          {"version"},      {"mean ± sd ms", true},
                                      {"P50 ms", true},       {"P99 ms", true}, {"relative P50", true},
                                      {"inferences/s", true}, {"peak MB", true}};
  if (energy) columns.push_back({"inferences/J", true});
  columns.push_back({"agreement"});
  if (labelled) columns.push_back({kLabelAccuracyTitle});
  columns.push_back({"status"});
  const auto footnote = energy_footnote(results);
  return markdown_table(columns, rows) + "\n" + (footnote.empty() ? "" : "- " + footnote + "\n\n");
}

// Which framework on which machine: one row per cell label, one column per machine.
std::string machine_matrix(const std::map<std::string, std::vector<LoadedResult>>& machines) {
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, std::string>> values;  // label -> machine -> cell
  for (const auto& [machine, cells] : machines)
    for (const auto& c : cells) {
      const auto label = cell_label(c.result);
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
      values[label][machine] = c.result.latency_ms ? p50(c.result) + " / " + p99(c.result) + " / " + throughput(c.result)
                                                   : std::string(name_of(c.result.status));
    }
  Row header{"framework \\ machine"};
  for (const auto& [machine, cells] : machines) header.push_back(machine);
  std::vector<Row> rows;
  for (const auto& label : labels) {
    Row row{label};
    for (const auto& [machine, cells] : machines) row.push_back(values[label].count(machine) ? values[label][machine] : "-");
    rows.push_back(std::move(row));
  }
  return table(header, rows);
}

// A pivot: one row per backend, one column per value of `axis`, `value` in the cells.
std::string pivot(const std::vector<LoadedResult>& cells, const std::string& axis_title,
                  const std::function<std::string(const result::RunResult&)>& axis,
                  const std::function<std::string(const result::RunResult&)>& value) {
  std::vector<std::string> columns;
  std::map<std::string, std::map<std::string, std::string>> by_backend;
  for (const auto& c : cells) {
    const auto column = axis(c.result);
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
    by_backend[c.result.backend.name][column] = value(c.result);
  }
  Row header{"framework \\ " + axis_title};
  header.insert(header.end(), columns.begin(), columns.end());
  std::vector<Row> rows;
  for (const auto& [backend, values] : by_backend) {
    Row row{backend};
    for (const auto& column : columns) row.push_back(values.count(column) ? values.at(column) : "-");
    rows.push_back(row);
  }
  return table(header, rows);
}

std::string lanes_of(const result::RunResult& r) { return std::to_string(r.scenario.parameters.lanes.value_or(1)); }

// The summary and axis tables of cells measured on one machine; `heading` is their Markdown level.
std::string machine_tables(const std::vector<LoadedResult>& all_cells, const std::string& heading) {
  std::string out = summary_table(all_cells) + ab_table(all_cells);
  // The axis tables compare measured cells only; failures are in the summary above.
  std::vector<LoadedResult> cells;
  for (const auto& c : all_cells)
    if (c.result.latency_ms) cells.push_back(c);
  if (distinct<std::string>(cells, threads_cell).size() > 1)
    out += heading + " Threads × throughput (inferences/s)\n\n" + pivot(cells, "threads", threads_cell, throughput);
  if (distinct<std::string>(cells, shape_of).size() > 1)
    out += heading + " Input shapes × latency (P50 ms / inferences/s)\n\n" +
           pivot(cells, "input shape", shape_of, [](const result::RunResult& r) { return p50(r) + " / " + throughput(r); });
  if (distinct<std::string>(cells, lanes_of).size() > 1)
    out += heading + " Instances × peak memory (MB)\n\n" + pivot(cells, "instances (lanes)", lanes_of, memory);
  const auto precision = [](const result::RunResult& r) { return r.requested.precision; };
  if (distinct<std::string>(cells, precision).size() > 1)
    out += heading + " Precision × latency and accuracy (P50 ms; agreement with the reference)\n\n" +
           pivot(cells, "precision", precision, [](const result::RunResult& r) { return p50(r) + "; " + accuracy(r); });
  return out;
}

// LLM cells: the generation table, one per machine.
std::string generation_section(const std::map<std::string, std::vector<LoadedResult>>& machines) {
  std::string out;
  for (const auto& [machine, cells] : machines) {
    std::vector<result::RunResult> results;
    for (const auto& c : cells) results.push_back(c.result);
    // The scenario notes (SLA verdicts, ramp knee and saturation with each step's goodput) follow the table.
    out += "### LLM serving (generation scenario) on " + machine + "\n\n" + generation_table(results) + scenario_notes(results) +
           "\n";
  }
  return out;
}

std::string model_section(const std::string& model, const std::vector<LoadedResult>& all_cells) {
  std::vector<std::string> model_paths;  // the zoo's offline FP16/INT8/Q4_0 accuracy, beside the speed
  for (const auto& c : all_cells) model_paths.push_back(c.result.model.path);
  auto notes = zoo_accuracy_notes(model_paths, "- ");
  if (!notes.empty()) notes += "\n";
  // Numbers from different machines never share a table: each machine gets its own tables, and
  // one matrix puts the same cell side by side across machines.
  const auto machines = group_by_machine(all_cells);
  if (std::all_of(all_cells.begin(), all_cells.end(), [](const LoadedResult& c) { return is_generation_result(c.result); }))
    return "## " + model + "\n\n" + generation_section(machines) + notes;
  if (machines.size() == 1)
    return "## " + model + "\n\nMeasured on " + machines.begin()->first + ".\n\n" + machine_tables(all_cells, "###") + notes;
  std::string out = "## " + model + "\n\n### Framework × machine (P50 ms / P99 ms / inferences/s)\n\n" + machine_matrix(machines);
  for (const auto& [machine, cells] : machines) out += "### Measured on " + machine + "\n\n" + machine_tables(cells, "####");
  return out + notes;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string markdown_report(const std::vector<LoadedResult>& results) {
  const auto groups = group_by_model(results);
  std::string out = "# infermark report\n\n";
  if (groups.size() > 1)
    out += fmt::format("Results cover {} models; each has its own tables (numbers from different models are never compared).\n\n",
                       groups.size());
  for (const auto& [model, cells] : groups) out += model_section(model, cells);
  std::set<std::string> machines;
  for (const auto& r : results)
    machines.insert(machine_key(r.result) + ", " + std::to_string(r.result.environment.value("logical_cores", 0)) +
                    " logical cores");
  out += "Machine" + std::string(machines.size() > 1 ? "s (results come from different machines!)" : "") + ": ";
  for (const auto& m : machines) out += m + "; ";
  out += "\n";
  return out;
}

std::string csv_report(const std::vector<LoadedResult>& results) {
  std::string out =
      "model,backend,version,threads,precision,batch,scenario,status,p50_ms,p99_ms,mean_ms,inferences_per_s,"
      "peak_rss_mb,energy_per_inference,agreement,file,inferences_per_j,machine\n";
  for (const auto& c : results) {
    const auto& r = c.result;
    const Row row{r.model.name,
                  r.backend.name,
                  r.backend.version,
                  threads_of(r),
                  r.requested.precision,
                  std::to_string(r.scenario.batch),
                  result::scenario_label(r.scenario),
                  std::string(name_of(r.status)),
                  p50(r),
                  p99(r),
                  dash_or(r.latency_ms.has_value(), [&] { return ms(r.latency_ms->mean); }),
                  throughput(r),
                  memory(r),
                  energy_per_inference(r),
                  accuracy(r),
                  c.path,
                  inferences_per_joule_cell(r),
                  machine_key(r)};
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
    out += "\n";
  }
  return out;
}

}  // namespace infermark::report

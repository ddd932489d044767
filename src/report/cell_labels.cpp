#include "report/cell_labels.hpp"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/comparison_table.hpp"
#include "report/machine.hpp"

namespace infermark::report {
namespace {

// "t2"; a framework's own choice is named as it put it, without the explanation.
std::string threads(const result::RunResult& r) {
  auto t = effective_setting(r, "intra_op_threads");
  if (t.empty() && r.requested.intra_op_threads > 0) t = std::to_string(r.requested.intra_op_threads);
  if (t.empty()) return "";
  if (const auto asked = requested_but_not_applied(r, "intra_op_threads"); !asked.empty())
    return "t" + t.substr(0, t.find(" (")) + " (asked " + asked + ")";
  if (t.find_first_not_of("0123456789") == std::string::npos) return "t" + t;
  return "threads " + t.substr(0, t.find(" ("));
}

// The precision asked for, unless the framework could not apply it: a GGUF file fixes its own
// ("llama ?B F16" -> "F16").
std::string precision(const result::RunResult& r) {
  for (const auto& s : r.effective_settings)
    if (s.key == "precision" && !s.applied() && !s.effective.empty()) return s.effective.substr(s.effective.rfind(' ') + 1);
  return r.requested.precision;
}

// Sequences or clients in flight: what `--concurrency` set (0 means the scenario's default).
std::string concurrency(const result::RunResult& r) {
  if (r.generation && r.generation->concurrency > 0) return fmt::format("C={}", r.generation->concurrency);
  const auto c = result::requested_concurrency(r.scenario.parameters);
  return c > 0 ? fmt::format("C={:g}", static_cast<double>(c)) : "";
}

// Single-stream is the concurrency scenario at one client: a cell that names its concurrency
// ("C=1") is called a concurrency cell, so a --concurrency 1,4,16 sweep reads as one curve.
std::string scenario(const result::RunResult& r) {
  if (result::ran(r.scenario, loadgen::Scenario::kSingleStream) && !concurrency(r).empty()) return "concurrency";
  return result::scenario_label(r.scenario);  // older LLM files' "generation" reads as concurrency
}

std::string lanes(const result::RunResult& r) {
  const auto n = r.scenario.parameters.lanes.value_or(0);
  return n > 0 ? fmt::format("lanes {:g}", static_cast<double>(n)) : "";
}

std::string sessions(const result::RunResult& r) {
  if (const auto& serving = r.scenario.parameters.serving; serving && serving->instances.value_or(0) > 0)  // serve
    return fmt::format("{} instances", *serving->instances);
  return r.scenario.parameters.session_sharing.value_or("");
}

std::string variant(const result::RunResult& r) {
  const auto& serving = r.scenario.parameters.serving;
  return serving && !serving->variant.empty() ? "variant " + serving->variant : "";
}

// The offered rate matters to the open-loop scenarios only (every setting is recorded).
std::string rate(const result::RunResult& r) {
  using loadgen::Scenario;
  const auto& s = r.scenario;
  const auto open_loop = result::ran(s, Scenario::kServer) || result::ran(s, Scenario::kInteractive) ||
                         result::ran(s, Scenario::kSoak) || result::ran(s, Scenario::kPulse);
  const auto qps = s.parameters.request ? s.parameters.request->qps : 0.0;
  if (result::ran(s, Scenario::kReplay) && s.parameters.trace)
    return fmt::format("trace {} x{:g}", s.parameters.trace->file, s.parameters.trace->speed);
  return open_loop && qps > 0 ? fmt::format("{:g} q/s", qps) : "";
}

std::string tokens(const result::RunResult& r) {
  if (!r.generation) return "";
  const auto& request = r.scenario.parameters.request;
  const auto prompt = request ? request->prompt_tokens : 0.0, output = request ? request->output_tokens : 0.0;
  return prompt > 0 || output > 0 ? fmt::format("{:g}+{:g} tok", prompt, output) : "";
}

std::string shapes(const result::RunResult& r) {
  const auto& varying = r.scenario.parameters.varying_shapes;
  if (!varying) return "";
  std::string text;
  for (const auto& [name, range] : varying->ranges) text += (text.empty() ? "" : " ") + name + "=" + range;
  return text;
}

std::string endpoint(const result::RunResult& r) {
  if (!r.remote) return "";
  return r.remote->protocol + " " + (r.remote->url.empty() ? r.model.path : r.remote->url);
}

std::string options(const result::RunResult& r) {
  std::string text;
  for (const auto& [key, value] : r.requested.extras) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text;
}

std::string run_folder(const LoadedResult& loaded) {
  const auto folder = std::filesystem::path(loaded.path).parent_path().filename().string();
  return folder.empty() ? "" : "[" + folder + "]";
}

std::string text_of(LabelDimension dimension, const LoadedResult& loaded) {
  const auto& r = loaded.result;
  switch (dimension) {
    case LabelDimension::kModel:
      return r.model.name;
    case LabelDimension::kBackend:
      return backend_label(r);
    case LabelDimension::kPrecision:
      return precision(r);
    case LabelDimension::kThreads:
      return threads(r);
    case LabelDimension::kInterOpThreads:
      return r.requested.inter_op_threads > 0 ? fmt::format("inter-op t{}", r.requested.inter_op_threads) : "";
    case LabelDimension::kDevice:
      return r.requested.device;
    case LabelDimension::kBatch:
      return "batch " + batch_cell(r);
    case LabelDimension::kScenario:
      return scenario(r);
    case LabelDimension::kConcurrency:
      return concurrency(r);
    case LabelDimension::kLanes:
      return lanes(r);
    case LabelDimension::kSessions:
      return sessions(r);
    case LabelDimension::kVariant:
      return variant(r);
    case LabelDimension::kRate:
      return rate(r);
    case LabelDimension::kTokens:
      return tokens(r);
    case LabelDimension::kShapes:
      return shapes(r);
    case LabelDimension::kEndpoint:
      return endpoint(r);
    case LabelDimension::kOptions:
      return options(r);
    case LabelDimension::kMachine:
      return machine_key(r);
    case LabelDimension::kRunFolder:
      return run_folder(loaded);
    case LabelDimension::kFile:
      return std::filesystem::path(loaded.path).filename().string();
  }
  return "";
}

// How a dimension joins a label.
enum class Inclusion {
  kAlways,      // the backend: every label names one
  kWhenVaries,  // any parameter whose value differs between the cells
  kLastResort,  // only to split cells that every other part left alike
};

struct DimensionRow {
  LabelDimension dimension;
  std::string_view name;
  Inclusion inclusion;
  // Another way of saying `aspect_of` (lanes are the concurrency): once that part is named, this
  // one is left out unless it splits cells the label would leave alike. `aspect_of == dimension`
  // for none.
  LabelDimension aspect_of;
};

// Every dimension once, in the order parts appear in a label. Precision is an aspect of the model:
// a zoo variant's file name carries it ("llama-tiny_q8_0").
constexpr DimensionRow kDimensions[] = {
    {LabelDimension::kModel, "model", Inclusion::kWhenVaries, LabelDimension::kModel},
    {LabelDimension::kBackend, "backend", Inclusion::kAlways, LabelDimension::kBackend},
    {LabelDimension::kPrecision, "precision", Inclusion::kWhenVaries, LabelDimension::kModel},
    {LabelDimension::kThreads, "threads", Inclusion::kWhenVaries, LabelDimension::kThreads},
    {LabelDimension::kInterOpThreads, "inter-op threads", Inclusion::kWhenVaries, LabelDimension::kInterOpThreads},
    {LabelDimension::kDevice, "device", Inclusion::kWhenVaries, LabelDimension::kDevice},
    {LabelDimension::kBatch, "batch", Inclusion::kWhenVaries, LabelDimension::kBatch},
    {LabelDimension::kScenario, "scenario", Inclusion::kWhenVaries, LabelDimension::kScenario},
    {LabelDimension::kConcurrency, "concurrency", Inclusion::kWhenVaries, LabelDimension::kConcurrency},
    {LabelDimension::kLanes, "lanes", Inclusion::kWhenVaries, LabelDimension::kConcurrency},
    {LabelDimension::kSessions, "sessions", Inclusion::kWhenVaries, LabelDimension::kConcurrency},
    {LabelDimension::kVariant, "variant", Inclusion::kWhenVaries, LabelDimension::kBackend},
    {LabelDimension::kRate, "rate", Inclusion::kWhenVaries, LabelDimension::kRate},
    {LabelDimension::kTokens, "tokens", Inclusion::kWhenVaries, LabelDimension::kTokens},
    {LabelDimension::kShapes, "shapes", Inclusion::kWhenVaries, LabelDimension::kShapes},
    {LabelDimension::kEndpoint, "endpoint", Inclusion::kWhenVaries, LabelDimension::kBackend},
    {LabelDimension::kOptions, "options", Inclusion::kWhenVaries, LabelDimension::kOptions},
    {LabelDimension::kMachine, "machine", Inclusion::kWhenVaries, LabelDimension::kMachine},
    {LabelDimension::kRunFolder, "run folder", Inclusion::kLastResort, LabelDimension::kRunFolder},
    {LabelDimension::kFile, "file", Inclusion::kLastResort, LabelDimension::kFile},
};

// Neither shown once for the whole group: the section names the model, and files differ anyway.
bool names_the_group(LabelDimension d) {
  return d == LabelDimension::kModel || d == LabelDimension::kRunFolder || d == LabelDimension::kFile;
}

std::size_t distinct(const std::vector<std::string>& keys) { return std::set<std::string>(keys.begin(), keys.end()).size(); }

}  // namespace

std::string_view dimension_name(LabelDimension dimension) {
  for (const auto& row : kDimensions)
    if (row.dimension == dimension) return row.name;
  return "";
}

std::string CellLabel::without(LabelDimension dimension) const {
  std::string out;
  for (const auto& part : parts)
    if (part.dimension != dimension) out += (out.empty() ? "" : " ") + part.text;
  return out;
}

CellLabels label_cells(const std::vector<const LoadedResult*>& results) {
  CellLabels labels;
  labels.cells.resize(results.size());
  std::vector<std::string> keys(results.size());  // each cell's parts so far
  std::set<LabelDimension> taken;
  for (const auto& row : kDimensions) {
    std::vector<std::string> texts, refined = keys;
    for (std::size_t i = 0; i < results.size(); ++i) {
      texts.push_back(text_of(row.dimension, *results[i]));
      refined[i] += '\x1f' + texts.back();
    }
    // An aspect of a part already named only where it tells apart cells the label would not.
    const bool is_aspect = row.aspect_of != row.dimension && taken.contains(row.aspect_of);
    const bool splits = distinct(refined) > distinct(keys);
    const bool include = row.inclusion == Inclusion::kAlways ||
                         (row.inclusion == Inclusion::kWhenVaries && distinct(texts) > 1 && (!is_aspect || splits)) ||
                         (row.inclusion == Inclusion::kLastResort && splits);
    if (include) {
      // A last resort goes only to the cells still alike, so the others keep short labels.
      std::map<std::string, int> uses;
      for (const auto& key : keys) ++uses[key];
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (row.inclusion == Inclusion::kLastResort && uses[keys[i]] < 2) continue;
        if (!texts[i].empty()) labels.cells[i].parts.push_back({row.dimension, texts[i]});
        keys[i] = refined[i];
      }
      taken.insert(row.dimension);
    } else if (!names_the_group(row.dimension) && !results.empty() && !texts.front().empty() && distinct(texts) == 1) {
      labels.shared.push_back({row.dimension, texts.front()});
    }
  }
  for (auto& cell : labels.cells)
    for (const auto& part : cell.parts) cell.text += (cell.text.empty() ? "" : " ") + part.text;
  return labels;
}

CellLabels label_cells(const std::vector<LoadedResult>& results) {
  std::vector<const LoadedResult*> pointers;
  for (const auto& r : results) pointers.push_back(&r);
  return label_cells(pointers);
}

}  // namespace infermark::report

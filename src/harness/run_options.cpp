#include "harness/run_options.hpp"

#include <algorithm>
#include <tuple>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "core/input_labels.hpp"
#include "core/model_manifest.hpp"
#include "probes/environment.hpp"

namespace infermark::harness {

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw Error(flag + " " + text + ": expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int default_thread_count() {
  const auto env = probes::capture_environment();
  return env.physical_cores > 0 ? env.physical_cores : 1;
}

std::vector<int> concurrency_levels(const RunOptions& o) {
  if (o.concurrency.empty()) return {0};
  std::vector<int> levels;
  for (int c : o.concurrency)
    if (std::find(levels.begin(), levels.end(), c) == levels.end()) levels.push_back(c);
  return levels;
}

namespace {

// "512" or "512:64": MEAN or MEAN:STDDEV of `unit` (tokens, seconds), neither negative.
std::pair<double, double> parse_mean_stddev(const std::string& text, const std::string& flag, const std::string& unit) {
  const auto colon = text.find(':');
  auto number = [&](const std::string& part) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || !(value >= 0))
      throw Error(flag + " " + text + ": expected MEAN or MEAN:STDDEV " + unit);
    return value;
  };
  return {number(text.substr(0, colon)), colon == std::string::npos ? 0.0 : number(text.substr(colon + 1))};
}

std::pair<double, double> parse_token_length(const std::string& text, const std::string& flag) {
  const auto length = parse_mean_stddev(text, flag, "tokens");
  if (length.first < 1) throw Error(flag + " " + text + ": must be at least 1 token");
  return length;
}

}  // namespace

std::vector<int> thread_counts(const RunOptions& o) {
  if (o.threads.empty()) return {default_thread_count()};
  std::vector<int> counts;
  for (int t : o.threads)
    if (std::find(counts.begin(), counts.end(), t) == counts.end()) counts.push_back(t);
  return counts;
}

result::CellRequest to_cell(const RunOptions& o, const std::string& backend, int threads, int concurrency) {
  result::CellRequest cell;
  cell.backend = backend;
  cell.model = o.model;
  cell.options.intra_op_threads = threads;
  cell.options.inter_op_threads = o.inter_op_threads;
  cell.options.precision = o.precision;
  cell.options.device = o.device;
  for (const auto& opt : o.backend_opts) {
    auto [key, value] = split_assignment(opt, "--opt");
    cell.options.extras[key] = value;
  }
  cell.inputs.batch = o.batch;
  cell.inputs.seed = o.seed;
  cell.inputs.int_high = o.int_high;
  cell.sessions = o.sessions;
  cell.inputs.int_ranges = read_value_ranges(o.model);
  for (const auto& shape : o.shapes) {
    auto [name, dims] = split_assignment(shape, "--shape");
    cell.inputs.shape_overrides[name] = parse_shape(dims, "--shape " + shape);
  }
  for (const auto& text : o.shape_ranges) {
    auto [name, dims] = split_assignment(text, "--shape-range");
    const auto range = parse_shape_range(dims, "--shape-range " + text);
    if (cell.inputs.shape_overrides.count(name) || cell.inputs.varying.ranges.count(name))
      throw Error("--shape-range " + text + ": input '" + name +
                  "' already has a shape; give one --shape or --shape-range per input");
    if (varies(range)) {
      cell.inputs.varying.ranges[name] = range;
      continue;
    }
    for (const auto& dim : range) cell.inputs.shape_overrides[name].push_back(dim.low);
  }
  cell.inputs.varying.sets = o.shape_sets;
  for (const auto& input : o.input_files) {
    auto [name, file] = split_assignment(input, "--input");
    if (!std::filesystem::is_regular_file(file)) throw Error("--input " + input + ": no such file");
    cell.inputs.files[name] = file;
    read_input_labels(file);  // a malformed labels file beside it fails here, before anything runs
  }
  if (!o.perplexity_text.empty()) {
    if (!is_language_model(o.model))
      throw Error("--perplexity-text: only language models (GGUF, *.genai) have a perplexity; " + o.model + " is not one");
    if (!std::filesystem::is_regular_file(o.perplexity_text))
      throw Error("--perplexity-text " + o.perplexity_text + ": no such file");
    cell.perplexity_text = o.perplexity_text;
    cell.perplexity_window = o.perplexity_window;
  }
  cell.scenario = scenario_of(o, concurrency);
  // A language model asked for C > 1 sequences without a scenario runs them as the concurrency
  // scenario (C requests batched together), as `--concurrency 1,4,16` always meant for LLMs.
  if (is_language_model(o.model) && cell.scenario.name == loadgen::Scenario::kSingleStream && cell.scenario.concurrency > 1)
    cell.scenario.name = loadgen::Scenario::kConcurrency;
  loadgen::validate(cell.scenario);
  return cell;
}

loadgen::ScenarioSpec scenario_of(const RunOptions& o, int concurrency) {
  auto scenario = o.scenario;
  scenario.seed = o.seed;
  scenario.concurrency = concurrency > 0 ? concurrency : concurrency_levels(o).front();
  std::tie(scenario.prompt_tokens, scenario.prompt_tokens_stddev) = parse_token_length(o.prompt_tokens, "--prompt-tokens");
  std::tie(scenario.output_tokens, scenario.output_tokens_stddev) = parse_token_length(o.output_tokens, "--output-tokens");
  scenario.shared_prefix = loadgen::parse_shared_prefix(o.shared_prefix, "--shared-prefix");
  std::tie(scenario.conversation.think_s, scenario.conversation.think_stddev_s) =
      parse_mean_stddev(o.think_time, "--think-time", "seconds");
  scenario.trace.format = loadgen::parse_trace_format(o.trace_format, "--trace-format");
  if (scenario.trace.enabled()) {
    // --trace alone replays; the lengths asked are the trace's (read now: a bad file fails here).
    if (scenario.name == loadgen::Scenario::kSingleStream) scenario.name = loadgen::Scenario::kReplay;
    const auto trace = loadgen::summarize(*loadgen::load_trace(scenario.trace), scenario.trace.speed);
    scenario.prompt_tokens = trace.mean_input_tokens;
    scenario.output_tokens = trace.mean_output_tokens;
    scenario.prompt_tokens_stddev = scenario.output_tokens_stddev = 0;
  }
  loadgen::fill_scenario_defaults(scenario);
  const auto pulse = parse_shape(o.pulse_times_text, "--pulse-times");  // three positive integers, "10,10,20"
  if (pulse.size() != 3) throw Error("--pulse-times " + o.pulse_times_text + ": expected BASELINE,BURST,RECOVERY seconds");
  scenario.pulse_baseline_s = static_cast<double>(pulse[0]);
  scenario.pulse_burst_s = static_cast<double>(pulse[1]);
  scenario.pulse_recovery_s = static_cast<double>(pulse[2]);
  return scenario;
}

std::vector<result::CellRequest> model_cells(const RunOptions& options, const std::vector<std::string>& backends) {
  std::vector<result::CellRequest> cells;
  for (const auto& backend : backends)
    for (int t : thread_counts(options))
      for (int c : concurrency_levels(options)) cells.push_back(to_cell(options, backend, t, c));
  return cells;
}

BackendSelection select_backends(const std::vector<std::string>& requested, const std::string& model,
                                 const std::vector<std::string>& available) {
  const auto format = model_format(model);
  BackendSelection selection;
  if (requested.empty()) {
    for (const auto& name : available)
      if (backend_reads(name, format)) selection.chosen.push_back(name);
    if (selection.chosen.empty())
      throw Error(model + ": no built backend reads ." + format + " models (see `infermark backends`)");
    return selection;
  }
  for (const auto& name : requested) {
    try {
      BackendRegistry::check_known(name);
      if (std::find(available.begin(), available.end(), name) == available.end())
        throw Error("backend '" + name + "' is not built into this infermark (see `infermark backends`)");
      if (!backend_reads(name, format))
        throw Error("backend '" + name + "' does not read ." + format + " models (" + model + ")");
      if (std::find(selection.chosen.begin(), selection.chosen.end(), name) == selection.chosen.end())
        selection.chosen.push_back(name);
    } catch (const Error& e) {
      selection.rejected.emplace_back(name, e.what());
    }
  }
  return selection;
}

double default_cell_timeout_s(const loadgen::ScenarioSpec& scenario) { return loadgen::planned_duration_s(scenario) + 600; }

std::string thread_list_text(const std::vector<int>& threads) {
  std::string text;
  for (int t : threads) text += (text.empty() ? "" : ",") + (t == 0 ? std::string("framework-default") : std::to_string(t));
  return text;
}

}  // namespace infermark::harness

#include "report/html_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/ab_table.hpp"
#include "report/cell_labels.hpp"
#include "report/model_families.hpp"
#include "report/recommend.hpp"
#include "report/zoo_accuracy.hpp"

namespace infermark::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTemplateFile = "report_template.html";
constexpr const char* kDataMarker = "/*INFERMARK_DATA*/";
constexpr const char* kLibraryMarker = "/*INFERMARK_CHART_LIBRARY*/";
constexpr const char* kScenarioChartsFile = "report_scenarios.js";
constexpr const char* kLlmChartsFile = "report_llm.js";
constexpr const char* kScenarioChartsMarker = "/*INFERMARK_SCENARIO_CHARTS*/";
constexpr const char* kLlmChartsMarker = "/*INFERMARK_LLM_CHARTS*/";
constexpr const char* kWebDirFix = "set INFERMARK_WEB_DIR to the web/ folder of the infermark repository";
constexpr const char* kSetupFix = "run scripts/setup, which runs npm ci in web/";
// A CDF drawn from more points than this looks the same; beyond it only the page's size grows.
constexpr std::size_t kMaxEmbeddedSamples = 4000;

std::string read_text(const fs::path& path, const std::string& what, const std::string& fix) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": " + what + " not found; " + fix);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The browser (UMD) build that CDNs serve: package.json names it under "jsdelivr" or "unpkg";
// "main" is the CommonJS build, which a page cannot load.
fs::path chart_library_path(const fs::path& web_dir) {
  const auto package_dir = web_dir / "node_modules" / "chart.js";
  const auto manifest_path = package_dir / "package.json";
  const auto manifest = json::parse(read_text(manifest_path, "chart library (npm package chart.js)", kSetupFix), nullptr,
                                    /*allow_exceptions=*/false);
  for (const char* field : {"jsdelivr", "unpkg"})
    if (manifest.is_object() && manifest.contains(field) && manifest[field].is_string())
      return (package_dir / manifest[field].get<std::string>()).lexically_normal();
  return package_dir / "dist" / "chart.umd.js";
}

// The source map comment points at a file that is not inlined; drop it.
std::string without_source_map(std::string script) {
  const auto at = script.rfind("//# sourceMappingURL=");
  if (at != std::string::npos) script.erase(at, script.find('\n', at) - at);
  return script;
}

// A script placed inside <script>...</script>: "</script" in it would end the element early.
std::string inlinable_script(const fs::path& path, std::string script) {
  if (script.find("</script") != std::string::npos)
    throw Error(path.string() + ": contains \"</script\" and cannot be inlined into the report");
  return script;
}

std::string chart_library(const fs::path& web_dir) {
  const auto path = chart_library_path(web_dir);
  return inlinable_script(path, without_source_map(read_text(path, "chart library", kSetupFix)));
}

// One of web/'s chart scripts: the study and scenario charts (threads, ramp, soak, pulse, batch,
// Pareto, shapes, pipeline) or the LLM ones (Pareto fronts, turns, prefix warmth, SLO inputs).
std::string chart_script(const fs::path& web_dir, const char* file, const std::string& what) {
  const auto path = web_dir / file;
  return inlinable_script(path, read_text(path, what, kWebDirFix));
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// JSON inside <script>: "</" could close the element and "<!--" switches the HTML parser into
// a mode where </script> no longer ends it. Both only occur inside JSON strings, where these
// escapes read back as the same characters.
std::string json_for_script(const json& data) {
  auto text = json_text(data);
  replace_all(text, "</", "<\\/");
  replace_all(text, "<!--", "<\\u0021--");
  return text;
}

// Evenly spaced order statistics (always the minimum and maximum) of `samples`.
std::vector<double> thinned_sorted(std::vector<double> samples, std::size_t points) {
  std::sort(samples.begin(), samples.end());
  std::vector<double> out;
  out.reserve(points);
  const auto last = samples.size() - 1;
  for (std::size_t i = 0; i < points; ++i) out.push_back(samples[i * last / (points - 1)]);
  return out;
}

json cell_json(const LoadedResult& loaded, const CellLabel& label) {
  json cell = {{"label", label.text},
               {"series", label.without(LabelDimension::kConcurrency)},
               {"path", loaded.path},
               {"result", to_json(loaded.result)}};
  const auto& samples = loaded.result.samples_ms;
  if (samples.size() > kMaxEmbeddedSamples) {
    cell["result"]["samples_ms"] = thinned_sorted(samples, kMaxEmbeddedSamples);
    cell["samples_thinned_from"] = samples.size();
  }
  return cell;
}

json parts_json(const std::vector<LabelPart>& parts) {
  json out = json::array();
  for (const auto& part : parts) out.push_back({{"dimension", dimension_name(part.dimension)}, {"text", part.text}});
  return out;
}

struct FamilyCell {
  std::size_t group = 0, cell = 0;  // indices into the report's groups and that group's cells
  const LoadedResult* result = nullptr;
};

std::vector<const LoadedResult*> results_of(const std::vector<FamilyCell>& cells) {
  std::vector<const LoadedResult*> results;
  for (const auto& c : cells) results.push_back(c.result);
  return results;
}

// The cells worth putting side by side: configurations (the label without the model) that two
// or more variants measured; every cell when no configuration was measured by two.
std::vector<FamilyCell> comparable_cells(const std::vector<FamilyCell>& cells) {
  const auto labels = label_cells(results_of(cells));
  // A run folder tells two runs of one configuration apart; it is not part of the configuration.
  std::vector<std::string> configurations;
  for (const auto& label : labels.cells) {
    std::string configuration;
    for (const auto& part : label.parts)
      if (part.dimension != LabelDimension::kModel && part.dimension != LabelDimension::kRunFolder &&
          part.dimension != LabelDimension::kFile)
        configuration += part.text + '\x1f';
    configurations.push_back(configuration);
  }
  std::map<std::string, std::set<std::size_t>> variants_by_configuration;
  for (std::size_t i = 0; i < cells.size(); ++i) variants_by_configuration[configurations[i]].insert(cells[i].group);
  std::vector<FamilyCell> comparable;
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (variants_by_configuration[configurations[i]].size() > 1) comparable.push_back(cells[i]);
  return comparable.empty() ? cells : comparable;
}

// A family's comparable cells labelled together, so each names its variant (model).
json family_json(const ModelFamily& family, const std::vector<std::vector<LoadedResult>>& groups) {
  std::vector<FamilyCell> all;
  json members = json::array();
  for (const auto g : family.members) {
    const auto& first = groups[g].front().result;
    members.push_back({{"group", g},
                       {"model", first.model.name},
                       {"format", first.model.format},
                       {"precision", zoo_precision_name(parse_variant_name(first.model.name).precision)},
                       {"zoo_accuracy", zoo_accuracy_note(first.model.path)}});
    for (std::size_t c = 0; c < groups[g].size(); ++c) all.push_back({g, c, &groups[g][c]});
  }
  const auto cells = comparable_cells(all);
  const auto labels = label_cells(results_of(cells));
  json where = json::array();
  for (std::size_t i = 0; i < cells.size(); ++i)
    where.push_back({{"group", cells[i].group},
                     {"cell", cells[i].cell},
                     {"label", labels.cells[i].text},
                     {"series", labels.cells[i].without(LabelDimension::kConcurrency)}});
  return {{"family", family.family},
          {"members", members},
          {"cells", where},
          {"cells_left_out", all.size() - cells.size()},
          {"shared", parts_json(labels.shared)}};
}

// The recommendation (without constraints: ranked by P99), with its reasons; a report is still
// worth having when it cannot be made, so the cause is shown instead.
json recommendation_json(const std::vector<LoadedResult>& results, const Constraints& constraints) {
  try {
    return to_json(recommend(results, constraints));
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

// The page's model groups (each model's cells, so numbers of different models never share a chart)
// and the grouped results the families are found in.
struct Groups {
  json groups = json::array();
  std::vector<std::vector<LoadedResult>> grouped;
  std::vector<std::string> model_names;
};

// Appends `results`' groups; `experiment` marks them as one evaluation experiment's.
void append_groups(Groups& out, const std::vector<LoadedResult>& results, const std::optional<std::size_t>& experiment) {
  for (auto& [model, cells] : group_by_model(results)) {
    const auto labels = label_cells(cells);
    json group = {{"model", model}, {"shared", parts_json(labels.shared)}, {"cells", json::array()}};
    for (std::size_t i = 0; i < cells.size(); ++i) group["cells"].push_back(cell_json(cells[i], labels.cells[i]));
    if (const auto ab = ab_comparison(cells); !ab.empty()) group["ab"] = to_json(ab);
    if (experiment) group["experiment"] = *experiment;
    out.groups.push_back(std::move(group));
    out.model_names.push_back(cells.front().result.model.name);
    out.grouped.push_back(std::move(cells));
  }
}

json families_json(const Groups& groups) {
  json families = json::array();
  for (const auto& family : model_families(groups.model_names)) families.push_back(family_json(family, groups.grouped));
  return families;
}

json report_data(const std::vector<LoadedResult>& results) {
  Groups groups;
  append_groups(groups, results, std::nullopt);
  return {{"groups", groups.groups}, {"families", families_json(groups)}, {"recommendation", recommendation_json(results, {})}};
}

json evaluation_data(const EvaluationHeader& header, const std::vector<ExperimentSection>& sections,
                     const EvaluationDecision& decision) {
  Groups groups;
  json experiments = json::array();
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    append_groups(groups, s.results, i);
    experiments.push_back({{"title", s.title},
                           {"file", s.file},
                           {"outcome", outcome_text(s.outcome)},
                           {"reason", s.reason},
                           {"unsupported", s.unsupported},
                           {"cells", s.results.size()},
                           {"summary", s.summary_markdown}});
  }
  json recommendation = {{"error", decision.error}}, verdicts = json::array();
  if (decision.recommendation) {
    recommendation = to_json(*decision.recommendation);
    for (const auto& r : verdict_rows(*decision.recommendation))
      verdicts.push_back({{"model", r.model},
                          {"machine", r.machine},
                          {"objective", r.objective},
                          {"pick", r.pick},
                          {"figures", r.figures},
                          {"runner_up", r.runner_up},
                          {"ruled_out", r.ruled_out}});
  }
  return {{"groups", groups.groups},
          {"families", families_json(groups)},
          {"recommendation", recommendation},
          {"verdicts", verdicts},
          {"evaluation",
           {{"name", header.name},
            {"description", header.description},
            {"quick", header.quick},
            {"limits", header.limits_text},
            {"experiments", experiments}}}};
}

struct Substitution {
  std::string marker;
  std::string text;
};

// Substitutes each marker once, in one pass over the template, so text inlined for one marker
// is never searched for another.
std::string fill_template(const std::string& page, const fs::path& source, const std::vector<Substitution>& substitutions) {
  std::vector<std::pair<std::size_t, const Substitution*>> by_position;
  for (const auto& s : substitutions) {
    const auto at = page.find(s.marker);
    if (at == std::string::npos) throw Error(source.string() + ": template lacks the marker " + s.marker);
    by_position.emplace_back(at, &s);
  }
  std::sort(by_position.begin(), by_position.end());
  std::string out;
  std::size_t copied = 0;
  for (const auto& [at, s] : by_position) {
    out.append(page, copied, at - copied).append(s->text);
    copied = at + s->marker.size();
  }
  return out.append(page, copied);
}

fs::path executable_dir() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

}  // namespace

namespace {

std::string render_page(const json& data, const fs::path& web_dir) {
  const auto template_path = web_dir / kTemplateFile;
  const auto page = read_text(template_path, "HTML report template", kWebDirFix);
  return fill_template(page, template_path,
                       {{kDataMarker, json_for_script(data)},
                        {kLibraryMarker, chart_library(web_dir)},
                        {kScenarioChartsMarker, chart_script(web_dir, kScenarioChartsFile, "scenario chart script")},
                        {kLlmChartsMarker, chart_script(web_dir, kLlmChartsFile, "LLM chart script")}});
}

}  // namespace

std::string render_html_report(const std::vector<LoadedResult>& results, const fs::path& web_dir) {
  return render_page(report_data(results), web_dir);
}

std::string render_evaluation_html(const EvaluationHeader& header, const std::vector<ExperimentSection>& sections,
                                   const EvaluationDecision& decision, const fs::path& web_dir) {
  return render_page(evaluation_data(header, sections, decision), web_dir);
}

fs::path default_web_dir() {
  if (const char* env = std::getenv("INFERMARK_WEB_DIR"); env && *env) return env;
  const auto exe_dir = executable_dir();
  for (auto dir = exe_dir; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "web" / kTemplateFile)) return dir / "web";
    if (dir == dir.root_path()) break;
  }
  return (exe_dir / ".." / ".." / "web").lexically_normal();
}

}  // namespace infermark::report

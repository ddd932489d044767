// `recommend --json`: the constraints, peak, every model's ranked and rejected cells with their
// figures and checks, the families, notes and the machine matrix.
#include "report/decision_tree_verdicts.hpp"
#include "report/recommend.hpp"
#include "report/recommend_figures.hpp"

namespace infermark::report {
namespace {

using nlohmann::json;

json check_json(const ConstraintCheck& c) {
  const char* outcome = c.outcome == Outcome::kMet ? "met" : c.outcome == Outcome::kFailed ? "failed" : "cannot be judged";
  return {{"constraint", c.constraint}, {"outcome", outcome}, {"detail", c.detail}, {"required", c.required}};
}

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json cell_json(const CellAssessment& cell) {
  const auto& f = cell.figures;
  json checks = json::array();
  for (const auto& c : cell.checks) checks.push_back(check_json(c));
  return {{"label", cell.label},
          {"path", cell.path},
          {"model_name", cell.model_name},
          {"model_file", cell.model_file},
          {"backend", cell.backend},
          {"batch", cell.batch},
          {"completed", cell.completed},
          {"p99_ms", f.p99_ms},
          {"qps", f.qps},
          {"qps_source", f.qps_source},
          {"inferences_per_s", f.inferences_per_s},
          {"peak_rss_mb", f.peak_rss_mb},
          {"accuracy_loss", optional_json(f.accuracy_loss)},
          {"accuracy_source", f.accuracy_source},
          {"accuracy_measure", accuracy_measure_name(f.accuracy_measure)},
          {"label_top1", optional_json(f.label_top1)},
          {"label_samples", f.label_samples},
          {"inferences_per_joule", optional_json(f.inferences_per_joule)},
          {"energy_source", f.energy_source},
          {"average_watts", optional_json(f.average_watts)},
          {"power_source", f.power_source},
          {"ttft_p99_ms", optional_json(f.ttft_p99_ms)},
          {"tpot_p99_ms", optional_json(f.tpot_p99_ms)},
          {"parameters", optional_json(f.parameters)},
          {"gb_per_billion_parameters", optional_json(f.gb_per_billion_parameters)},
          {"cost_per_million", optional_json(cell.cost_per_million)},
          {"machines", optional_json(cell.machines)},
          {"model_gflops", optional_json(f.model_gflops)},
          {"gflops_source", f.gflops_source},
          {"gflops", optional_json(cell.gflops)},
          {"percent_of_peak", optional_json(cell.percent_of_peak)},
          {"meets_all", cell.meets_all()},
          {"binding", cell.binding()},
          {"checks", checks}};
}

json families_json(const std::vector<FamilyRecommendation>& families) {
  json out = json::array();
  for (const auto& f : families) {
    json ranked = json::array(), rejected = json::array();
    for (const auto& cell : f.ranked) ranked.push_back(cell_json(cell));
    for (const auto& cell : f.rejected) rejected.push_back(cell_json(cell));
    out.push_back(
        {{"family", f.family},
         {"machine", f.machine},
         {"origin", name_of(f.origin)},
         {"objective", f.objective},
         {"pick", f.ranked.empty() ? json(nullptr)
                                   : json{{"model_file", f.ranked.front().model_file}, {"label", f.ranked.front().label}}},
         {"ranked", ranked},
         {"rejected", rejected}});
  }
  return out;
}

json matrix_json(const MachineMatrix& matrix) {
  json rows = json::array();
  for (const auto& row : matrix.rows) rows.push_back({{"model", row.model}, {"cell", row.cell}, {"values", row.values}});
  return {{"machines", matrix.machines}, {"rows", rows}};
}

}  // namespace

json to_json(const Recommendation& rec) {
  const auto& c = rec.constraints;
  json models = json::array();
  for (const auto& m : rec.models) {
    json ranked = json::array(), rejected = json::array(), branches = json::array();
    for (const auto& cell : m.ranked) ranked.push_back(cell_json(cell));
    for (const auto& cell : m.rejected) rejected.push_back(cell_json(cell));
    for (const auto& b : m.decision_tree_branches) branches.push_back(to_json(b));
    models.push_back({{"model", m.model},
                      {"machine", m.machine},
                      {"origin", name_of(m.origin)},
                      {"origin_named", m.origin_named},
                      {"objective", m.objective},
                      {"pick", m.ranked.empty() ? json(nullptr) : json(m.ranked.front().label)},
                      {"ranked", ranked},
                      {"rejected", rejected},
                      {"decision_tree_branches", branches},
                      {"explanation", m.explanation}});
  }
  return {{"constraints",
           {{"p99_ms", optional_json(c.p99_ms)},
            {"min_qps", optional_json(c.min_qps)},
            {"mem_mb", optional_json(c.mem_mb)},
            {"max_accuracy_loss_pct", optional_json(c.max_accuracy_loss_pct)},
            {"dynamic_shapes", c.dynamic_shapes},
            {"energy", c.energy},
            {"price_per_hour", optional_json(c.price_per_hour)},
            {"target_qps", optional_json(c.target_qps)},
            {"model_gflops", optional_json(c.model_gflops)},
            {"watts", optional_json(c.watts)},
            {"ttft_ms", optional_json(c.ttft_ms)},
            {"tpot_ms", optional_json(c.tpot_ms)},
            {"domestic_hardware", c.domestic_hardware},
            {"fast_iteration", c.fast_iteration},
            {"dynamic_control_flow", c.dynamic_control_flow},
            {"multi_backend", c.multi_backend}}},
          {"peak", rec.peak ? json{{"gflops", rec.peak->gflops}, {"derivation", rec.peak->derivation}} : json(nullptr)},
          {"models", models},
          {"families", families_json(rec.families)},
          {"notes", rec.notes},
          {"machine_matrix", rec.machine_matrix ? matrix_json(*rec.machine_matrix) : json(nullptr)},
          {"every_model_has_a_pick", rec.every_model_has_a_pick()}};
}

}  // namespace infermark::report

#include "harness/cross_check.hpp"

#include <map>

#include "core/npy.hpp"

namespace infermark::harness {
namespace {

bool has_outputs(const report::RunResult& r) { return r.status == "ok" && !r.outputs_dir.empty(); }

std::vector<Tensor> load_outputs(const report::RunResult& r) {
  std::vector<Tensor> tensors;
  for (const auto& spec : r.model.outputs) tensors.push_back(read_npy(output_file(r.outputs_dir, spec.name), spec.name));
  return tensors;
}

const CellOutcome* choose_reference(const std::vector<CellOutcome*>& family, const std::string& preferred) {
  const CellOutcome* first = nullptr;
  for (const auto* o : family) {
    if (!has_outputs(o->result)) continue;
    if (o->result.backend.name == preferred) return o;
    if (!first) first = o;
  }
  return first;
}

}  // namespace

std::string model_family(const std::string& model_name) {
  for (const std::string suffix : {"_fp32", "_fp16", "_bf16", "_int8", "_q8_0", "_q4_0"})
    if (model_name.size() > suffix.size() && model_name.compare(model_name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return model_name.substr(0, model_name.size() - suffix.size());
  return model_name;
}

void cross_check_outputs(std::vector<CellOutcome>& outcomes, const std::string& preferred) {
  std::map<std::string, std::vector<CellOutcome*>> families;
  // Cells fed shapes drawn per query save their first input set's outputs: compare them only with
  // cells that drew the same sets (same ranges; the same seed gives the same draws everywhere).
  const auto varying = [](const report::RunResult& r) {
    return r.scenario.parameters.contains("varying_shapes") ? " " + r.scenario.parameters["varying_shapes"]["ranges"].dump() : "";
  };
  for (auto& o : outcomes) families[model_family(o.result.model.name) + varying(o.result)].push_back(&o);
  for (auto& [family, members] : families) {
    const auto* reference = choose_reference(members, preferred);
    if (!reference) continue;
    const auto reference_outputs = load_outputs(reference->result);
    const auto reference_name = reference->result.backend.name;
    const auto reference_file = reference->result_path.filename().string();
    for (auto* o : members) {
      if (!has_outputs(o->result)) continue;
      o->result.cross_check = report::CrossCheck{reference_name, reference_file, o == reference,
                                                 stats::compare_outputs(reference_outputs, load_outputs(o->result))};
      report::write_run_result(o->result, o->result_path.string());
    }
  }
}

}  // namespace infermark::harness

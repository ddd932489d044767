#include "harness/cross_check.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <string_view>

#include "core/json_text.hpp"
#include "core/npy.hpp"
#include "harness/measure_cell.hpp"

namespace infermark::harness {
namespace {

bool has_outputs(const result::RunResult& r) { return r.status == result::CellStatus::kOk && !r.outputs_dir.empty(); }

std::vector<Tensor> load_outputs(const result::RunResult& r, const std::filesystem::path& dir) {
  std::vector<Tensor> tensors;
  for (const auto& spec : r.model.outputs) tensors.push_back(read_npy(result::output_file(dir, spec.name), spec.name));
  return tensors;
}

std::vector<Tensor> load_outputs(const result::RunResult& r) { return load_outputs(r, r.outputs_dir); }

// The shape of each input set whose outputs were saved (varying shapes), else none.
std::vector<std::string> set_shapes(const result::RunResult& r) {
  const auto& varying = r.scenario.parameters.varying_shapes;
  return varying ? varying->set_groups : std::vector<std::string>{};
}

// Every input set compared, folded per shape: the worst error and cosine, the mean top-1 share.
std::vector<result::ShapeAgreement> agreement_by_shape(const result::RunResult& reference, const result::RunResult& candidate) {
  const auto shapes = set_shapes(candidate);
  if (shapes.empty() || shapes != set_shapes(reference)) return {};
  std::map<std::string, result::ShapeAgreement> by_shape;
  std::map<std::string, std::pair<double, int>> top1;  // sum and count per shape
  std::vector<std::string> order;
  for (std::uint32_t set = 0; set < shapes.size(); ++set) {
    auto& a = by_shape[shapes[set]];
    if (a.sets == 0) {
      a.shape = shapes[set];
      order.push_back(shapes[set]);
    }
    ++a.sets;
    const auto agreement =
        stats::compare_outputs(load_outputs(reference, result::sample_outputs_dir(reference.outputs_dir, set)),
                               load_outputs(candidate, result::sample_outputs_dir(candidate.outputs_dir, set)));
    for (const auto& o : agreement) {
      a.comparable = a.comparable && o.comparable;
      a.max_abs_error = std::max(a.max_abs_error, o.max_abs_error);
      a.min_cosine_similarity = std::min(a.min_cosine_similarity, o.cosine_similarity);
    }
    if (!agreement.empty() && agreement.front().top1_agreement) {
      top1[shapes[set]].first += *agreement.front().top1_agreement;
      top1[shapes[set]].second += 1;
    }
  }
  std::vector<result::ShapeAgreement> out;
  for (const auto& shape : order) {
    auto a = by_shape[shape];
    if (top1[shape].second > 0) a.top1_agreement = top1[shape].first / top1[shape].second;
    out.push_back(a);
  }
  return out;
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
  // _opencv: the same network exported for OpenCV DNN (efficientnet_lite0_opencv.onnx, opset 10),
  // after its precision suffix (efficientnet_lite0_opencv_int8): both are stripped.
  // A mixed-precision build's tag follows its precision (efficientnet_lite0_int8_keep4,
  // minilm_l6_topics_int8_attnfp32): it goes first, so the build is checked against the stem's FP32.
  constexpr std::array<std::string_view, 7> kSuffixes{"_fp32", "_fp16", "_bf16", "_int8", "_q8_0", "_q4_0", "_opencv"};
  const auto precisions = std::span(kSuffixes).first(6);
  const auto has_precision = [&](std::string_view name) {
    return std::any_of(precisions.begin(), precisions.end(), [&](std::string_view p) { return name.ends_with(p); });
  };
  std::string family = model_name;
  if (const auto cut = family.rfind('_');
      cut != std::string::npos && cut > 0 && !has_precision(family) && has_precision(std::string_view(family).substr(0, cut)))
    family.resize(cut);
  for (const auto suffix : kSuffixes)
    if (family.size() > suffix.size() && family.ends_with(suffix)) family.resize(family.size() - suffix.size());
  return family;
}

void cross_check_outputs(std::vector<CellOutcome>& outcomes, const std::string& preferred) {
  std::map<std::string, std::vector<CellOutcome*>> families;
  // Cells fed shapes drawn per query save their first input set's outputs: compare them only with
  // cells that drew the same sets (same ranges; the same seed gives the same draws everywhere).
  const auto varying = [](const result::RunResult& r) {
    const auto& shapes = r.scenario.parameters.varying_shapes;
    return shapes ? " " + json_text(nlohmann::json(shapes->ranges)) : "";
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
      o->result.cross_check = result::CrossCheck{
          reference_name, reference_file, o == reference, stats::compare_outputs(reference_outputs, load_outputs(o->result)), {}};
      try {
        o->result.cross_check->by_shape = agreement_by_shape(reference->result, o->result);
      } catch (const std::exception& e) {  // a missing or unreadable set file loses the per-shape check only
        o->result.cross_check->outputs.push_back(
            {"(every input set)", false, e.what(), 0, 0, 0, std::nullopt, std::nullopt, std::nullopt});
      }
      save_result(*o);
    }
  }
}

}  // namespace infermark::harness

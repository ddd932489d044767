#include "report/model_families.hpp"

#include <array>
#include <optional>
#include <utility>

namespace infermark::report {
namespace {

struct SuffixRow {
  ZooPrecision precision;
  std::string_view name;
};

// One table: the name each precision has and the suffix its files carry ("_" + name).
constexpr std::array<SuffixRow, 9> kPrecisions{{{ZooPrecision::kAsExported, "as exported"},
                                                {ZooPrecision::kFp32, "fp32"},
                                                {ZooPrecision::kFp16, "fp16"},
                                                {ZooPrecision::kInt8, "int8"},
                                                {ZooPrecision::kQ8_0, "q8_0"},
                                                {ZooPrecision::kQ4_0, "q4_0"},
                                                {ZooPrecision::kInt4, "int4"},
                                                {ZooPrecision::kInt4Awq, "int4_awq"},
                                                {ZooPrecision::kInt4Gptq, "int4_gptq"}}};

}  // namespace

std::string_view zoo_precision_name(ZooPrecision precision) {
  for (const auto& row : kPrecisions)
    if (row.precision == precision) return row.name;
  return "";
}

namespace {

// `name` without a precision suffix, and that precision; nothing when it has none.
std::optional<ModelVariantName> strip_precision(const std::string& name) {
  for (const auto& row : kPrecisions) {
    if (row.precision == ZooPrecision::kAsExported) continue;
    const auto suffix = "_" + std::string(row.name);
    if (name.size() > suffix.size() && name.ends_with(suffix))
      return ModelVariantName{name.substr(0, name.size() - suffix.size()), row.precision};
  }
  return std::nullopt;
}

}  // namespace

ModelVariantName parse_variant_name(const std::string& model_name) {
  if (auto variant = strip_precision(model_name)) return *variant;
  // A mixed-precision build, <stem>_<precision>_<tag> (efficientnet_lite0_int8_keep4): a variant of
  // that precision in the stem's family, so it is judged against the stem's FP32.
  if (const auto cut = model_name.rfind('_'); cut != std::string::npos && cut + 1 < model_name.size())
    if (auto variant = strip_precision(model_name.substr(0, cut))) return *variant;
  return {model_name, ZooPrecision::kAsExported};
}

std::vector<ModelFamily> model_families(const std::vector<std::string>& model_names) {
  std::vector<ModelFamily> families;
  for (std::size_t i = 0; i < model_names.size(); ++i) {
    const auto family = parse_variant_name(model_names[i]).family;
    auto it = families.begin();
    while (it != families.end() && it->family != family) ++it;
    if (it == families.end())
      families.push_back({family, {i}});
    else
      it->members.push_back(i);
  }
  std::erase_if(families, [](const ModelFamily& f) { return f.members.size() < 2; });
  return families;
}

}  // namespace infermark::report

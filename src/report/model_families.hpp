// Precision variants of one model, as the zoo names its files: <stem>.<ext> is the model as
// exported, <stem>_<precision>.<ext> (fp16, int8, q8_0, q4_0) a reduced-precision copy of it
// (tools/zoo/zoo_variants.py stem_for, export_llama_gguf.py). Reports compare a family's variants
// side by side, where each variant is otherwise its own model.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace infermark::report {

enum class ZooPrecision { kAsExported, kFp32, kFp16, kInt8, kQ8_0, kQ4_0, kInt4, kInt4Awq, kInt4Gptq };

// "fp16", "q8_0"; "as exported" for a file without a precision suffix.
std::string_view zoo_precision_name(ZooPrecision precision);

struct ModelVariantName {
  std::string family;  // the stem without its precision suffix: "llama-tiny"
  ZooPrecision precision = ZooPrecision::kAsExported;
};

// "llama-tiny_q8_0" -> {"llama-tiny", kQ8_0}; a mixed-precision build "<stem>_int8_keep4" ->
// {"<stem>", kInt8}; a name without a known suffix is its own family.
ModelVariantName parse_variant_name(const std::string& model_name);

struct ModelFamily {
  std::string family;
  std::vector<std::size_t> members;  // indices into the model names given, in their order
};

// Families with at least two members (a model name may appear more than once, e.g. one model in
// ONNX and in OpenVINO IR: each is a member), in order of their first member.
std::vector<ModelFamily> model_families(const std::vector<std::string>& model_names);

}  // namespace infermark::report

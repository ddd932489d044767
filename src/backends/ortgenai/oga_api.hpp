// ONNX Runtime GenAI's C API, opened with dlopen: the library (PyPI onnxruntime-genai, in
// third_party/onnxruntime-genai) finds ONNX Runtime itself at run time through ORT_LIB_PATH, so
// infermark points it at the ONNX Runtime of the same install, and a missing or foreign library
// is a clear error when a model opens rather than a link failure of the plugin.
#pragma once

#include <memory>
#include <string>

#include "backends/ortgenai/oga_0_18_declarations.hpp"

namespace infermark {

struct OgaApi {
  std::string library_path;
  std::string version;              // from the install's VERSION file, checked against the declarations
  std::string onnxruntime_library;  // the ONNX Runtime it runs on
  std::string onnxruntime_version;  // that library's own OrtGetApiBase()->GetVersionString()

  decltype(&OgaResultGetError) result_error = nullptr;
  decltype(&OgaDestroyResult) destroy_result = nullptr;
  decltype(&OgaDestroyString) destroy_string = nullptr;
  decltype(&OgaCreateConfig) create_config = nullptr;
  decltype(&OgaConfigOverlay) config_overlay = nullptr;
  decltype(&OgaConfigClearProviders) config_clear_providers = nullptr;
  decltype(&OgaDestroyConfig) destroy_config = nullptr;
  decltype(&OgaCreateModelFromConfig) create_model = nullptr;
  decltype(&OgaModelGetType) model_type = nullptr;
  decltype(&OgaModelGetDeviceType) model_device_type = nullptr;
  decltype(&OgaDestroyModel) destroy_model = nullptr;
  decltype(&OgaCreateGeneratorParams) create_params = nullptr;
  decltype(&OgaGeneratorParamsSetSearchNumber) params_set_number = nullptr;
  decltype(&OgaGeneratorParamsSetSearchBool) params_set_bool = nullptr;
  decltype(&OgaDestroyGeneratorParams) destroy_params = nullptr;
  decltype(&OgaCreateGenerator) create_generator = nullptr;
  decltype(&OgaDestroyGenerator) destroy_generator = nullptr;
  decltype(&OgaGenerator_AppendTokens) append_tokens = nullptr;
  decltype(&OgaGenerator_GenerateNextToken) generate_next_token = nullptr;
  decltype(&OgaGenerator_GetNextTokens) next_tokens = nullptr;
  decltype(&OgaGenerator_GetOutput) get_output = nullptr;
  decltype(&OgaCreateSequences) create_sequences = nullptr;
  decltype(&OgaDestroySequences) destroy_sequences = nullptr;
  decltype(&OgaSequencesGetSequenceCount) sequence_count = nullptr;
  decltype(&OgaSequencesGetSequenceData) sequence_data = nullptr;
  decltype(&OgaCreateTokenizer) create_tokenizer = nullptr;
  decltype(&OgaDestroyTokenizer) destroy_tokenizer = nullptr;
  decltype(&OgaTokenizerEncode) encode = nullptr;
  decltype(&OgaTokenizerDecode) decode = nullptr;
  decltype(&OgaDestroyTensor) destroy_tensor = nullptr;
  decltype(&OgaTensorGetType) tensor_type = nullptr;
  decltype(&OgaTensorGetShapeRank) tensor_rank = nullptr;
  decltype(&OgaTensorGetShape) tensor_shape = nullptr;
  decltype(&OgaTensorGetData) tensor_data = nullptr;

  // Opens the install in `folder` (lib/libonnxruntime-genai.so, lib/libonnxruntime.so.*, VERSION)
  // once per process; throws infermark::Error naming the file and the cause.
  static const OgaApi& open(const std::string& folder, const std::string& expected_version);

  // Throws infermark::Error "<what>: <the library's message>" when `result` is an error, and
  // frees it either way.
  void check(OgaResult* result, const std::string& what) const;
};

// Owning handles: each destroys its object with the API's destroy call.
template <typename T>
struct OgaDeleter {
  void (*destroy)(T*) = nullptr;
  void operator()(T* object) const {
    if (object && destroy) destroy(object);
  }
};
template <typename T>
using OgaHandle = std::unique_ptr<T, OgaDeleter<T>>;

}  // namespace infermark

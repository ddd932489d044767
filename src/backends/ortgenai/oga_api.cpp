#include "backends/ortgenai/oga_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backends/shared_library.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

const char* const kSetupHint = " (scripts/setup installs it into third_party/onnxruntime-genai)";

template <typename Function>
void resolve(void* handle, const std::string& library, const char* symbol, Function& target) {
  shared_library::resolve(handle, "ONNX Runtime GenAI library", library, symbol, target);
}

void* open_library(const std::string& path, int flags) {
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error("cannot open " + path + ": " + (reason ? reason : "unknown dlopen error") + kSetupHint);
  }
  return handle;
}

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) throw Error("cannot read " + file.string() + kSetupHint);
  return line;
}

// ONNX Runtime's own entry point (onnxruntime_c_api.h keeps OrtApiBase's layout stable across
// versions): the version string of the library GenAI will run on.
struct OrtApiBaseLayout {
  const void* (*get_api)(std::uint32_t);
  const char* (*get_version_string)();
};

std::string onnxruntime_version(void* handle, const std::string& library) {
  const OrtApiBaseLayout* (*get_api_base)() = nullptr;
  shared_library::resolve(handle, "ONNX Runtime library", library, "OrtGetApiBase", get_api_base);
  return get_api_base()->get_version_string();
}

OgaApi open_install(const std::string& folder, const std::string& expected_version) {
  namespace fs = std::filesystem;
  const fs::path lib = fs::path(folder) / "lib";
  OgaApi api;
  api.version = first_line(fs::path(folder) / "VERSION");
  if (api.version != expected_version)
    throw Error(
        "ONNX Runtime GenAI in " + folder + " is version " + api.version + ", but infermark's declarations of its C API " +
        "(src/backends/ortgenai/oga_0_18_declarations.hpp) were checked against " + expected_version + " only" + kSetupHint);
  for (const auto& entry : fs::directory_iterator(lib))
    if (entry.path().filename().string().rfind("libonnxruntime.so.", 0) == 0) api.onnxruntime_library = entry.path().string();
  if (api.onnxruntime_library.empty()) throw Error("no libonnxruntime.so.* in " + lib.string() + kSetupHint);
  // GenAI opens ONNX Runtime by the path in ORT_LIB_PATH; loading it first, RTLD_GLOBAL, makes
  // that open find this very library rather than another one on the search path.
  void* ort = open_library(api.onnxruntime_library, RTLD_NOW | RTLD_GLOBAL);
  api.onnxruntime_version = onnxruntime_version(ort, api.onnxruntime_library);
  setenv("ORT_LIB_PATH", api.onnxruntime_library.c_str(), 1);
  // GenAI and ONNX Runtime otherwise start telemetry uploader threads at a process's first model
  // load, unless the environment looks like CI: off always, so no uploader competes with the
  // measurement and the pool threads a load starts are the pool alone, here and in CI alike.
  setenv("ORT_DISABLE_TELEMETRY", "1", 1);
  api.library_path = (lib / "libonnxruntime-genai.so").string();
  void* handle = open_library(api.library_path, RTLD_NOW | RTLD_LOCAL);
  const auto& path = api.library_path;
  resolve(handle, path, "OgaResultGetError", api.result_error);
  resolve(handle, path, "OgaDestroyResult", api.destroy_result);
  resolve(handle, path, "OgaDestroyString", api.destroy_string);
  resolve(handle, path, "OgaCreateConfig", api.create_config);
  resolve(handle, path, "OgaConfigOverlay", api.config_overlay);
  resolve(handle, path, "OgaConfigClearProviders", api.config_clear_providers);
  resolve(handle, path, "OgaDestroyConfig", api.destroy_config);
  resolve(handle, path, "OgaCreateModelFromConfig", api.create_model);
  resolve(handle, path, "OgaModelGetType", api.model_type);
  resolve(handle, path, "OgaModelGetDeviceType", api.model_device_type);
  resolve(handle, path, "OgaDestroyModel", api.destroy_model);
  resolve(handle, path, "OgaCreateGeneratorParams", api.create_params);
  resolve(handle, path, "OgaGeneratorParamsSetSearchNumber", api.params_set_number);
  resolve(handle, path, "OgaGeneratorParamsSetSearchBool", api.params_set_bool);
  resolve(handle, path, "OgaDestroyGeneratorParams", api.destroy_params);
  resolve(handle, path, "OgaCreateGenerator", api.create_generator);
  resolve(handle, path, "OgaDestroyGenerator", api.destroy_generator);
  resolve(handle, path, "OgaGenerator_AppendTokens", api.append_tokens);
  resolve(handle, path, "OgaGenerator_GenerateNextToken", api.generate_next_token);
  resolve(handle, path, "OgaGenerator_GetNextTokens", api.next_tokens);
  resolve(handle, path, "OgaGenerator_GetOutput", api.get_output);
  resolve(handle, path, "OgaCreateSequences", api.create_sequences);
  resolve(handle, path, "OgaDestroySequences", api.destroy_sequences);
  resolve(handle, path, "OgaSequencesGetSequenceCount", api.sequence_count);
  resolve(handle, path, "OgaSequencesGetSequenceData", api.sequence_data);
  resolve(handle, path, "OgaCreateTokenizer", api.create_tokenizer);
  resolve(handle, path, "OgaDestroyTokenizer", api.destroy_tokenizer);
  resolve(handle, path, "OgaTokenizerEncode", api.encode);
  resolve(handle, path, "OgaTokenizerDecode", api.decode);
  resolve(handle, path, "OgaDestroyTensor", api.destroy_tensor);
  resolve(handle, path, "OgaTensorGetType", api.tensor_type);
  resolve(handle, path, "OgaTensorGetShapeRank", api.tensor_rank);
  resolve(handle, path, "OgaTensorGetShape", api.tensor_shape);
  resolve(handle, path, "OgaTensorGetData", api.tensor_data);
  return api;
}

}  // namespace

const OgaApi& OgaApi::open(const std::string& folder, const std::string& expected_version) {
  return shared_library::open_once<OgaApi>([&] { return open_install(folder, expected_version); });
}

void OgaApi::check(OgaResult* result, const std::string& what) const {
  if (result == nullptr) return;
  std::string message = result_error(result);
  destroy_result(result);
  throw Error(what + ": " + message);
}

}  // namespace infermark

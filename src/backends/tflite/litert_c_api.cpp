#include "backends/tflite/litert_c_api.hpp"

#include <dlfcn.h>

#include <filesystem>

#include "backends/shared_library.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

template <typename Function>
void resolve(void* handle, const std::string& library, const char* symbol, Function& target) {
  shared_library::resolve(handle, "LiteRT library", library, symbol, target);
}

// The ai-edge-litert version whose package holds `library`: the <name>-<version>.dist-info folder
// beside the package folder; "unknown" when there is none.
std::string package_version(const std::string& library) {
  namespace fs = std::filesystem;
  const fs::path package = fs::path(library).parent_path();
  const std::string prefix = package.filename().string() + "-";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(package.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".dist-info")
      return name.substr(prefix.size(), name.size() - prefix.size() - std::string(".dist-info").size());
  }
  return "unknown";
}

}  // namespace

LiteRtCApi LiteRtCApi::open(const std::string& library, const std::string& expected_version) {
  LiteRtCApi api;
  api.library_path = library;
  api.version = package_version(library);
  if (api.version != expected_version)
    throw Error("LiteRT library " + library + " belongs to ai-edge-litert " + api.version + ", but infermark's declarations of " +
                "LiteRT's C API match ai-edge-litert " + expected_version + " only; install that version with scripts/setup");
  // RTLD_LOCAL: the library carries its own TfLite, which must not bind to another one in the process.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error("cannot open the LiteRT library " + library + ": " + (reason ? reason : "unknown dlopen error") +
                " (scripts/setup installs ai-edge-litert into .venv)");
  }
  resolve(handle, library, "LiteRtCreateEnvironment", api.create_environment);
  resolve(handle, library, "LiteRtDestroyEnvironment", api.destroy_environment);
  resolve(handle, library, "LiteRtCreateModelFromFile", api.create_model_from_file);
  resolve(handle, library, "LiteRtDestroyModel", api.destroy_model);
  resolve(handle, library, "LiteRtGetModelSignature", api.get_model_signature);
  resolve(handle, library, "LiteRtGetNumSignatureInputs", api.signature_input_count);
  resolve(handle, library, "LiteRtGetNumSignatureOutputs", api.signature_output_count);
  resolve(handle, library, "LiteRtGetSignatureInputTensorByIndex", api.signature_input_tensor);
  resolve(handle, library, "LiteRtGetSignatureOutputTensorByIndex", api.signature_output_tensor);
  resolve(handle, library, "LiteRtGetTensorName", api.tensor_name);
  resolve(handle, library, "LiteRtGetTensorTypeId", api.tensor_type_id);
  resolve(handle, library, "LiteRtGetRankedTensorType", api.ranked_tensor_type);
  resolve(handle, library, "LiteRtCreateOptions", api.create_options);
  resolve(handle, library, "LiteRtDestroyOptions", api.destroy_options);
  resolve(handle, library, "LiteRtSetOptionsHardwareAccelerators", api.set_hardware_accelerators);
  resolve(handle, library, "LiteRtCreateOpaqueOptions", api.create_opaque_options);
  resolve(handle, library, "LiteRtAddOpaqueOptions", api.add_opaque_options);
  resolve(handle, library, "LiteRtCreateCompiledModel", api.create_compiled_model);
  resolve(handle, library, "LiteRtDestroyCompiledModel", api.destroy_compiled_model);
  resolve(handle, library, "LiteRtGetCompiledModelInputBufferRequirements", api.input_requirements);
  resolve(handle, library, "LiteRtGetCompiledModelOutputBufferRequirements", api.output_requirements);
  resolve(handle, library, "LiteRtGetCompiledModelOutputTensorLayouts", api.output_layouts);
  resolve(handle, library, "LiteRtCompiledModelResizeInputTensor", api.resize_input);
  resolve(handle, library, "LiteRtRunCompiledModel", api.run);
  resolve(handle, library, "LiteRtCompiledModelGetErrorMessages", api.error_messages);
  resolve(handle, library, "LiteRtCreateManagedTensorBufferFromRequirements", api.create_buffer);
  resolve(handle, library, "LiteRtDestroyTensorBuffer", api.destroy_buffer);
  resolve(handle, library, "LiteRtGetTensorBufferSize", api.buffer_size);
  resolve(handle, library, "LiteRtLockTensorBuffer", api.lock_buffer);
  resolve(handle, library, "LiteRtUnlockTensorBuffer", api.unlock_buffer);
  return api;
}

const LiteRtCApi& litert_c_api() {
  return shared_library::open_once<LiteRtCApi>([] {
#ifdef INFERMARK_LITERT_LIBRARY
    return LiteRtCApi::open(INFERMARK_LITERT_LIBRARY);
#else
    throw Error("runtime=litert: this build found no ai-edge-litert (libLiteRt.so) in .venv; scripts/setup installs it");
    return LiteRtCApi{};
#endif
  });
}

}  // namespace infermark

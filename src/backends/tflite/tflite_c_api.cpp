#include "backends/tflite/tflite_c_api.hpp"

#include <dlfcn.h>

#include "backends/shared_library.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

template <typename Function>
void resolve(void* handle, const std::string& library, const char* symbol, Function& target) {
  shared_library::resolve(handle, "TfLite C library", library, symbol, target);
}

}  // namespace

TfliteCApi TfliteCApi::open(const std::string& library, const std::string& expected_version) {
  // RTLD_LOCAL: the library carries its own TfLite, which must not bind to another one in the process.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error("cannot open the TfLite C library " + library + ": " + (reason ? reason : "unknown dlopen error") +
                " (scripts/setup installs it into third_party/tflite-c)");
  }
  TfliteCApi api;
  api.library_path = library;
  decltype(&TfLiteVersion) version = nullptr;
  resolve(handle, library, "TfLiteVersion", version);
  api.version = version();
  if (api.version != expected_version)
    throw Error("TfLite C library " + library + " reports TfLite " + api.version + ", but infermark's declarations of " +
                "what the AAR headers lack (XNNPACK delegate options) match TfLite " + expected_version +
                " only; install litert-lm-api's library with scripts/setup");
  resolve(handle, library, "TfLiteModelCreateFromFileWithErrorReporter", api.model_create_from_file);
  resolve(handle, library, "TfLiteModelDelete", api.model_delete);
  resolve(handle, library, "TfLiteInterpreterOptionsCreate", api.options_create);
  resolve(handle, library, "TfLiteInterpreterOptionsDelete", api.options_delete);
  resolve(handle, library, "TfLiteInterpreterOptionsSetNumThreads", api.options_set_num_threads);
  resolve(handle, library, "TfLiteInterpreterOptionsAddDelegate", api.options_add_delegate);
  resolve(handle, library, "TfLiteInterpreterOptionsSetErrorReporter", api.options_set_error_reporter);
  resolve(handle, library, "TfLiteInterpreterCreate", api.interpreter_create);
  resolve(handle, library, "TfLiteInterpreterDelete", api.interpreter_delete);
  resolve(handle, library, "TfLiteInterpreterAllocateTensors", api.allocate_tensors);
  resolve(handle, library, "TfLiteInterpreterResizeInputTensor", api.resize_input);
  resolve(handle, library, "TfLiteInterpreterInvoke", api.invoke);
  resolve(handle, library, "TfLiteInterpreterGetInputTensorCount", api.input_count);
  resolve(handle, library, "TfLiteInterpreterGetInputTensor", api.input_tensor);
  resolve(handle, library, "TfLiteInterpreterGetOutputTensorCount", api.output_count);
  resolve(handle, library, "TfLiteInterpreterGetOutputTensor", api.output_tensor);
  resolve(handle, library, "TfLiteTensorType", api.tensor_type);
  resolve(handle, library, "TfLiteTensorNumDims", api.tensor_num_dims);
  resolve(handle, library, "TfLiteTensorDim", api.tensor_dim);
  resolve(handle, library, "TfLiteTensorByteSize", api.tensor_byte_size);
  resolve(handle, library, "TfLiteTensorName", api.tensor_name);
  resolve(handle, library, "TfLiteTensorCopyFromBuffer", api.tensor_copy_from);
  resolve(handle, library, "TfLiteTensorCopyToBuffer", api.tensor_copy_to);
  resolve(handle, library, "TfLiteTypeGetName", api.type_name);
  resolve(handle, library, "TfLiteTensorGetDimsSignature", api.tensor_dims_signature);
  resolve(handle, library, "TfLiteXNNPackDelegateOptionsDefault", api.xnnpack_options_default);
  resolve(handle, library, "TfLiteXNNPackDelegateCreate", api.xnnpack_create);
  resolve(handle, library, "TfLiteXNNPackDelegateGetOptions", api.xnnpack_get_options);
  resolve(handle, library, "TfLiteXNNPackDelegateDelete", api.xnnpack_delete);
  return api;
}

const TfliteCApi& tflite_c_api() {
  return shared_library::open_once<TfliteCApi>([] { return TfliteCApi::open(INFERMARK_TFLITE_C_LIBRARY); });
}

}  // namespace infermark

// TfLite's C API, opened with dlopen so that a missing or foreign library is a clear error when a
// session opens, not a link failure of the whole plugin. Function types come from the AAR's C
// headers; what they lack comes from tflite_2_23_declarations.hpp, hence the version check.
#pragma once

#include <string>

#include "backends/tflite/tflite_2_23_declarations.hpp"
#include "tensorflow/lite/c/c_api.h"
#include "tensorflow/lite/c/c_api_experimental.h"

namespace infermark {

struct TfliteCApi {
  std::string library_path;
  std::string version;  // TfLiteVersion()

  decltype(&TfLiteModelCreateFromFileWithErrorReporter) model_create_from_file = nullptr;
  decltype(&TfLiteModelDelete) model_delete = nullptr;
  decltype(&TfLiteInterpreterOptionsCreate) options_create = nullptr;
  decltype(&TfLiteInterpreterOptionsDelete) options_delete = nullptr;
  decltype(&TfLiteInterpreterOptionsSetNumThreads) options_set_num_threads = nullptr;
  decltype(&TfLiteInterpreterOptionsAddDelegate) options_add_delegate = nullptr;
  decltype(&TfLiteInterpreterOptionsSetErrorReporter) options_set_error_reporter = nullptr;
  decltype(&TfLiteInterpreterCreate) interpreter_create = nullptr;
  decltype(&TfLiteInterpreterDelete) interpreter_delete = nullptr;
  decltype(&TfLiteInterpreterAllocateTensors) allocate_tensors = nullptr;
  decltype(&TfLiteInterpreterResizeInputTensor) resize_input = nullptr;
  decltype(&TfLiteInterpreterInvoke) invoke = nullptr;
  decltype(&TfLiteInterpreterGetInputTensorCount) input_count = nullptr;
  decltype(&TfLiteInterpreterGetInputTensor) input_tensor = nullptr;
  decltype(&TfLiteInterpreterGetOutputTensorCount) output_count = nullptr;
  decltype(&TfLiteInterpreterGetOutputTensor) output_tensor = nullptr;
  decltype(&TfLiteTensorType) tensor_type = nullptr;
  decltype(&TfLiteTensorNumDims) tensor_num_dims = nullptr;
  decltype(&TfLiteTensorDim) tensor_dim = nullptr;
  decltype(&TfLiteTensorByteSize) tensor_byte_size = nullptr;
  decltype(&TfLiteTensorName) tensor_name = nullptr;
  decltype(&TfLiteTensorCopyFromBuffer) tensor_copy_from = nullptr;
  decltype(&TfLiteTensorCopyToBuffer) tensor_copy_to = nullptr;
  decltype(&TfLiteTypeGetName) type_name = nullptr;
  tflite_2_23::TensorGetDimsSignature tensor_dims_signature = nullptr;
  tflite_2_23::XnnpackDelegateOptionsDefault xnnpack_options_default = nullptr;
  tflite_2_23::XnnpackDelegateCreate xnnpack_create = nullptr;
  tflite_2_23::XnnpackDelegateGetOptions xnnpack_get_options = nullptr;
  tflite_2_23::XnnpackDelegateDelete xnnpack_delete = nullptr;

  // Opens `library` (kept loaded for the process) and resolves every function; throws
  // infermark::Error naming the library when it cannot be opened, lacks a function, or reports a
  // TfLite version other than `expected_version`.
  static TfliteCApi open(const std::string& library, const std::string& expected_version = tflite_2_23::kTfliteVersion);
};

// The library this build was configured with (scripts/setup's third_party/tflite-c), opened once;
// a failure is rethrown on every call.
const TfliteCApi& tflite_c_api();

}  // namespace infermark

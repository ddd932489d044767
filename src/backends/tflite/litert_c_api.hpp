// LiteRT's own C API (ai-edge-litert's libLiteRt.so, the library litert-benchmark runs), opened with
// dlopen so that a missing or foreign library is a clear error when a session opens. Function types
// come from litert_2_3_declarations.hpp, hence the version check.
#pragma once

#include <string>

#include "backends/tflite/litert_2_3_declarations.hpp"

namespace infermark {

struct LiteRtCApi {
  std::string library_path;
  std::string version;  // ai-edge-litert's, from the dist-info beside its package

  litert_2_3::CreateEnvironment create_environment = nullptr;
  litert_2_3::DestroyEnvironment destroy_environment = nullptr;
  litert_2_3::CreateModelFromFile create_model_from_file = nullptr;
  litert_2_3::DestroyModel destroy_model = nullptr;
  litert_2_3::GetModelSignature get_model_signature = nullptr;
  litert_2_3::GetSignatureCount signature_input_count = nullptr;
  litert_2_3::GetSignatureCount signature_output_count = nullptr;
  litert_2_3::GetSignatureTensorByIndex signature_input_tensor = nullptr;
  litert_2_3::GetSignatureTensorByIndex signature_output_tensor = nullptr;
  litert_2_3::GetTensorName tensor_name = nullptr;
  litert_2_3::GetTensorTypeId tensor_type_id = nullptr;
  litert_2_3::GetRankedTensorType ranked_tensor_type = nullptr;
  litert_2_3::CreateOptions create_options = nullptr;
  litert_2_3::DestroyOptions destroy_options = nullptr;
  litert_2_3::SetOptionsHardwareAccelerators set_hardware_accelerators = nullptr;
  litert_2_3::CreateOpaqueOptions create_opaque_options = nullptr;
  litert_2_3::AddOpaqueOptions add_opaque_options = nullptr;
  litert_2_3::CreateCompiledModel create_compiled_model = nullptr;
  litert_2_3::DestroyCompiledModel destroy_compiled_model = nullptr;
  litert_2_3::GetBufferRequirements input_requirements = nullptr;
  litert_2_3::GetBufferRequirements output_requirements = nullptr;
  litert_2_3::GetOutputTensorLayouts output_layouts = nullptr;
  litert_2_3::ResizeInputTensor resize_input = nullptr;
  litert_2_3::RunCompiledModel run = nullptr;
  litert_2_3::GetErrorMessages error_messages = nullptr;
  litert_2_3::CreateManagedTensorBufferFromRequirements create_buffer = nullptr;
  litert_2_3::DestroyTensorBuffer destroy_buffer = nullptr;
  litert_2_3::GetTensorBufferSize buffer_size = nullptr;
  litert_2_3::LockTensorBuffer lock_buffer = nullptr;
  litert_2_3::UnlockTensorBuffer unlock_buffer = nullptr;

  // Opens `library` (kept loaded for the process) and resolves every function; throws
  // infermark::Error naming the library when it cannot be opened, lacks a function, or is not
  // ai-edge-litert `expected_version`'s (the library reports no version itself).
  static LiteRtCApi open(const std::string& library, const std::string& expected_version = litert_2_3::kLiteRtVersion);
};

// The library of the .venv this build was configured with, opened once; a failure is rethrown on
// every call.
const LiteRtCApi& litert_c_api();

}  // namespace infermark

// What the tflite backend's runtime=litert calls in LiteRT's own C API, written here for exactly
// the library PyPI's ai-edge-litert 2.3.0 ships (ai_edge_litert/libLiteRt.so, the one its
// litert-benchmark tool runs), from google-ai-edge/LiteRT's litert/c headers: no registry ships
// them. The library has no call that reports its version, so the loader (litert_c_api.cpp)
// refuses a library that does not sit in an ai_edge_litert package whose dist-info names
// kLiteRtVersion. Checked against that library (test_tflite_backend.cpp): every function resolves,
// outputs equal TfLite's C API's on the zoo's .tflite models, a bad file gives the FileIO status,
// and a CPU options payload "num_threads = 4" makes its XNNPACK pool add 3 worker threads.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace infermark::litert_2_3 {

inline constexpr const char* kLiteRtVersion = "2.3.0";

// Opaque handles.
using Environment = struct EnvironmentT*;
using Model = struct ModelT*;
using Signature = struct SignatureT*;
using Tensor = struct TensorT*;
using Options = struct OptionsT*;
using OpaqueOptions = struct OpaqueOptionsT*;
using CompiledModel = struct CompiledModelT*;
using TensorBuffer = struct TensorBufferT*;
using TensorBufferRequirements = struct TensorBufferRequirementsT*;

using Status = int;  // 0 is success
inline constexpr Status kStatusOk = 0;
using ParamIndex = size_t;

inline constexpr int kHwAcceleratorCpu = 1;  // bit of the accelerator set
inline constexpr int kTensorBufferTypeHostMemory = 1;
inline constexpr int kLockModeRead = 0;
inline constexpr int kLockModeWrite = 1;
inline constexpr int kRankedTensorType = 0;  // the tensor type id of a tensor with a shape

// Element types (TfLite's type numbers).
enum class ElementType : int32_t {
  kFloat32 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kBool = 6,
  kInt16 = 7,
  kInt8 = 9,
  kFloat16 = 10
};

inline constexpr int kMaxRank = 8;
struct Layout {
  uint32_t rank : 7;
  uint32_t has_strides : 1;
  int32_t dimensions[kMaxRank];
  uint32_t strides[kMaxRank];
};
static_assert(sizeof(Layout) == 68 && offsetof(Layout, dimensions) == 4, "LiteRT 2.3.0's layout");

struct RankedTensorType {
  int32_t element_type;
  Layout layout;
};
static_assert(sizeof(RankedTensorType) == 72 && offsetof(RankedTensorType, layout) == 4, "LiteRT 2.3.0's ranked tensor type");

// CPU options travel as opaque options under this identifier, their payload a NUL-terminated TOML
// text the runtime parses ("num_threads = N"), as LiteRT's own CPU options helper writes them.
inline constexpr const char* kCpuOptionsIdentifier = "xnnpack";

using CreateEnvironment = Status (*)(int option_count, const void* options, Environment*);
using DestroyEnvironment = void (*)(Environment);
using CreateModelFromFile = Status (*)(Environment, const char* path, Model*);
using DestroyModel = void (*)(Model);
using GetModelSignature = Status (*)(Model, ParamIndex, Signature*);
using GetSignatureCount = Status (*)(Signature, ParamIndex*);
using GetSignatureTensorByIndex = Status (*)(Signature, ParamIndex, Tensor*);
using GetTensorName = Status (*)(Tensor, const char**);
using GetTensorTypeId = Status (*)(Tensor, int*);
using GetRankedTensorType = Status (*)(Tensor, RankedTensorType*);
using CreateOptions = Status (*)(Options*);
using DestroyOptions = void (*)(Options);
using SetOptionsHardwareAccelerators = Status (*)(Options, int);
using CreateOpaqueOptions = Status (*)(const char* identifier, void* payload, void (*destroy)(void*), OpaqueOptions*);
using AddOpaqueOptions = Status (*)(Options, OpaqueOptions);
using CreateCompiledModel = Status (*)(Environment, Model, Options, CompiledModel*);
using DestroyCompiledModel = void (*)(CompiledModel);
using GetBufferRequirements = Status (*)(CompiledModel, ParamIndex signature, ParamIndex index, TensorBufferRequirements*);
using GetOutputTensorLayouts = Status (*)(CompiledModel, ParamIndex signature, size_t count, Layout*, bool update_allocation);
using ResizeInputTensor = Status (*)(CompiledModel, ParamIndex signature, ParamIndex index, const int* dims, size_t rank);
using RunCompiledModel = Status (*)(CompiledModel, ParamIndex signature, size_t input_count, TensorBuffer* inputs,
                                    size_t output_count, TensorBuffer* outputs);
using GetErrorMessages = Status (*)(CompiledModel, char** messages);  // the caller frees *messages
using CreateManagedTensorBufferFromRequirements = Status (*)(Environment, const RankedTensorType*, TensorBufferRequirements,
                                                             TensorBuffer*);
using DestroyTensorBuffer = void (*)(TensorBuffer);
using GetTensorBufferSize = Status (*)(TensorBuffer, size_t*);
using LockTensorBuffer = Status (*)(TensorBuffer, void** host_memory, int lock_mode);
using UnlockTensorBuffer = Status (*)(TensorBuffer);

}  // namespace infermark::litert_2_3

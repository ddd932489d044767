// What the tflite backend calls in TfLite 2.23.0 (the C library PyPI's litert-lm-api 0.18.1 exports)
// that the C headers of Maven's tensorflow-lite 2.12.0 AAR do not declare. No registry ships a
// matching xnnpack_delegate.h, so these are written here, for exactly that version: the loader
// refuses a library whose TfLiteVersion() reports another (tflite_c_api.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/lite/c/common.h"

namespace infermark::tflite_2_23 {

inline constexpr const char* kTfliteVersion = "2.23.0";

// TfLiteXNNPackDelegateOptions of TfLite 2.23.0, field for field; only num_threads is changed here,
// the rest keeps what TfLiteXNNPackDelegateOptionsDefault() returned. The library's
// TfLiteXNNPackDelegateOptionsDefault() writes 64 bytes through the returned struct's pointer (two
// 32-byte stores; flags = 3 at offset 8, weight_cache_file_descriptor = -1 at offset 40), so the last
// field, weight_cache_lock_memory, must be here: without it the call wrote 8 bytes past the struct.
struct XnnpackDelegateOptions {
  int32_t num_threads;
  uint32_t runtime_flags;
  uint32_t flags;
  void* weights_cache;
  bool handle_variable_ops;
  const char* weight_cache_file_path;
  int weight_cache_file_descriptor;
  void* weight_cache_provider;
  bool weight_cache_lock_memory;
};
static_assert(sizeof(XnnpackDelegateOptions) == 64, "TfLite 2.23.0's TfLiteXNNPackDelegateOptions is 64 bytes");
static_assert(offsetof(XnnpackDelegateOptions, weight_cache_file_descriptor) == 40, "as the library writes it");

using XnnpackDelegateOptionsDefault = XnnpackDelegateOptions (*)();
using XnnpackDelegateCreate = TfLiteDelegate* (*)(const XnnpackDelegateOptions*);
using XnnpackDelegateGetOptions = const XnnpackDelegateOptions* (*)(TfLiteDelegate*);
using XnnpackDelegateDelete = void (*)(TfLiteDelegate*);
// The shape a tensor was declared with (-1 where any size goes); its dims when it has none.
using TensorGetDimsSignature = const TfLiteIntArray* (*)(const TfLiteTensor*);

}  // namespace infermark::tflite_2_23

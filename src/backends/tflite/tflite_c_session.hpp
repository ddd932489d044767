// A tflite Session on TfLite's C API: one interpreter per slot, threads through
// TfLiteInterpreterOptionsSetNumThreads, and XNNPACK only where its delegate is added (the C API
// applies no default delegate).
#pragma once

#include <filesystem>
#include <memory>

#include "backends/backend.hpp"
#include "backends/tflite/tflite_c_api.hpp"

namespace infermark {

// Throws infermark::Error when the model cannot be read or an interpreter cannot be built.
std::unique_ptr<Session> open_tflite_c_session(const TfliteCApi& api, const std::filesystem::path& model,
                                               const SessionOptions& options, bool xnnpack);

}  // namespace infermark

// The tflite backend's runtime=python: LiteRT's Python API (ai-edge-litert) in an embedded CPython.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace infermark {

// Throws infermark::Error when Python, LiteRT or the model cannot be loaded.
std::unique_ptr<Session> open_tflite_python_session(const std::filesystem::path& model, const SessionOptions& options,
                                                    bool xnnpack);

// "ai-edge-litert <version> in CPython <version>"; throws infermark::Error when Python cannot start.
std::string tflite_python_runtime();

}  // namespace infermark

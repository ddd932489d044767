// A tflite Session on TfLite's C API: one interpreter per slot, threads through
// TfLiteInterpreterOptionsSetNumThreads, and XNNPACK only where its delegate is added (the C API
// applies no default delegate).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include "backends/backend.hpp"
#include "backends/tflite/tflite_c_api.hpp"

namespace infermark {

// Throws infermark::Error when the model cannot be read or an interpreter cannot be built.
std::unique_ptr<Session> open_tflite_c_session(const TfliteCApi& api, const std::filesystem::path& model,
                                               const SessionOptions& options, bool xnnpack);

// Reads `model` with TfLite's C API, which verifies the flatbuffer, and returns each input's
// declared shape (-1 where any size goes) by tensor name; throws infermark::Error with TfLite's
// reason when it cannot. runtime=litert runs this first: LiteRT 2.3.0 reads a file without
// verifying it (a file with flipped bits can crash it), and its C API reports the fixed shape of
// a tensor whose file gives no rank flag, where TfLite reports the declared -1.
std::map<std::string, std::vector<std::int64_t>> verified_input_signatures(const TfliteCApi& api,
                                                                           const std::filesystem::path& model);

}  // namespace infermark

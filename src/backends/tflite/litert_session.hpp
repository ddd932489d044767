// A tflite Session on LiteRT's own C API (runtime=litert): one environment and model, one
// CompiledModel per slot on the CPU accelerator, threads through LiteRT's CPU options as
// litert-benchmark sets them, host-memory tensor buffers made from the compiled model's
// requirements.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include "backends/backend.hpp"
#include "backends/tflite/litert_c_api.hpp"

namespace infermark {

// `declared`: each input's declared shape by tensor name (-1 where any size goes), which LiteRT's C
// API does not report for a file without rank flags; a -1 there makes the spec's dimension free.
// Throws infermark::Error when the model cannot be read or compiled.
std::unique_ptr<Session> open_litert_session(const LiteRtCApi& api, const std::filesystem::path& model,
                                             const SessionOptions& options,
                                             const std::map<std::string, std::vector<std::int64_t>>& declared);

}  // namespace infermark

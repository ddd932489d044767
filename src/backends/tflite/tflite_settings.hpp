// The tflite backend's options and the effective settings its runtimes (LiteRT's C API, TfLite's
// C API) report alike.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace infermark::tflite_settings {

inline constexpr const char* kBackend = "tflite";

enum class Runtime { kCApi, kLiteRt };

struct Choice {
  Runtime runtime = Runtime::kCApi;
  bool xnnpack = true;
};

// The options; runtime's default is litert where the build found ai-edge-litert's library, else c.
const std::vector<OptionDoc>& options();

// Checks the --opt keys and parses runtime= and xnnpack=; throws infermark::Error naming the option.
Choice parse(const SessionOptions& options);

std::string runtime_name(Runtime runtime);

// litert where the build found ai-edge-litert's library, else c.
Runtime default_runtime();

// runtime, inter_op_threads, device and precision: the same for either runtime.
std::vector<EffectiveSetting> common(const SessionOptions& options, Runtime runtime);

}  // namespace infermark::tflite_settings

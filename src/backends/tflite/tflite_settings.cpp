#include "backends/tflite/tflite_settings.hpp"

#include "backends/options.hpp"
#include "core/error.hpp"

namespace infermark::tflite_settings {
namespace {

// runtime=litert, LiteRT's C API on the library litert-benchmark runs, where this build found it
// (ai-edge-litert in .venv); TfLite's C API otherwise. Results name the one that ran.
#ifdef INFERMARK_LITERT_LIBRARY
constexpr const char* kDefaultRuntime = "litert";
#else
constexpr const char* kDefaultRuntime = "c";
#endif

}  // namespace

const std::vector<OptionDoc>& options() {
  static const std::vector<OptionDoc> docs{
      {"runtime", "c|litert", kDefaultRuntime,
       "c: TfLite's C API (litert-lm-api's library); "
       "litert: LiteRT's C API, a CompiledModel on ai-edge-litert's libLiteRt.so (what litert-benchmark runs)"},
      {"xnnpack", "on|off", "on",
       "XNNPACK, TFLite's CPU delegate; off runs TFLite's builtin kernels only (runtime=c; runtime=litert always runs XNNPACK)"}};
  return docs;
}

Choice parse(const SessionOptions& options) {
  check_option_keys(kBackend, options.extras, tflite_settings::options());
  Choice choice;
  choice.xnnpack = parse_bool_option(kBackend, "xnnpack", option_or(options.extras, "xnnpack", "on"));
  const auto runtime = option_or(options.extras, "runtime", kDefaultRuntime);
  if (runtime == "python")
    throw Error(
        "tflite: runtime=python was removed: runtime=litert runs the library litert-benchmark runs through LiteRT's "
        "C API, within 5% of that tool (docs/backends.md), with no Python in the timed call; use litert or c");
  if (runtime == "litert")
    choice.runtime = Runtime::kLiteRt;
  else if (runtime == "c")
    choice.runtime = Runtime::kCApi;
  else
    throw Error("tflite: option runtime=" + runtime + " is none of c, litert");
  if (choice.runtime == Runtime::kLiteRt && !choice.xnnpack)
    throw Error(
        "tflite: runtime=litert cannot take xnnpack=off: ai-edge-litert 2.3.0's CPU accelerator always runs XNNPACK "
        "(its CPU options have no kernel mode); use runtime=c for TFLite's builtin kernels");
  return choice;
}

Runtime default_runtime() { return std::string(kDefaultRuntime) == "litert" ? Runtime::kLiteRt : Runtime::kCApi; }

std::string runtime_name(Runtime runtime) {
  switch (runtime) {
    case Runtime::kCApi:
      return "c";
    case Runtime::kLiteRt:
      return "litert";
  }
  return "c";
}

std::vector<EffectiveSetting> common(const SessionOptions& options, Runtime runtime) {
  return {
      {"runtime", option_or(options.extras, "runtime", ""), runtime_name(runtime), SettingState::kVerified,
       "the session this backend opened"},
      {"inter_op_threads", options.inter_op_threads > 0 ? std::to_string(options.inter_op_threads) : "", "not applicable",
       configured_state(options.inter_op_threads <= 0), "TFLite runs one operator at a time"},
      {"device", options.device, "cpu", configured_state(options.device == "cpu"),
       options.device == "cpu" ? "" : "this backend runs on the CPU only"},
      {"precision", options.precision, "as stored in the model", configured_state(options.precision == "fp32"),
       options.precision == "fp32" ? "" : "TFLite runs the model's own precision; convert a reduced-precision model instead"},
  };
}

}  // namespace infermark::tflite_settings

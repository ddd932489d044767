// TFLite backend. runtime=litert (the default where the build found ai-edge-litert): LiteRT's own
// C API on ai-edge-litert's libLiteRt.so, the library LiteRT's benchmark tool runs. runtime=c:
// TfLite's C API from the library PyPI's litert-lm-api exports, with the C headers of Maven's
// tensorflow-lite AAR (scripts/setup: third_party/tflite-c). docs/backends.md compares both with
// that tool.
#include <filesystem>

#include "backends/backend.hpp"
#include "backends/declared.hpp"
#include "backends/plugin.hpp"
#include "backends/tflite/litert_c_api.hpp"
#include "backends/tflite/litert_session.hpp"
#include "backends/tflite/tflite_c_api.hpp"
#include "backends/tflite/tflite_c_session.hpp"
#include "backends/tflite/tflite_settings.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

using tflite_settings::Runtime;

std::unique_ptr<Session> open_session(const std::filesystem::path& model, const SessionOptions& options) {
  const auto choice = tflite_settings::parse(options);
  if (!std::filesystem::is_regular_file(model)) throw Error("no such model file");
  if (choice.runtime == Runtime::kCApi) return open_tflite_c_session(tflite_c_api(), model, options, choice.xnnpack);
  const auto& api = litert_c_api();
  return open_litert_session(api, model, options, verified_input_signatures(tflite_c_api(), model));
}

class TfliteBackend final : public Backend {
 public:
  // Version: the default runtime's library (ai-edge-litert's for runtime=litert, TfLite's for c);
  // each result names the library its session ran (Session::library_version, runtime_api).
  BackendInfo info() const override {
    const bool litert_default = tflite_settings::default_runtime() == Runtime::kLiteRt;
    std::string version = "unavailable", c_api, litert_api;
    try {
      const auto& api = tflite_c_api();
      if (!litert_default) version = api.version;
      c_api = "TfLite " + api.version + "'s C API from litert-lm-api's library";
    } catch (const Error& e) {
      c_api = std::string("unavailable: ") + e.what();
    }
    try {
      const auto& api = litert_c_api();
      if (litert_default) version = api.version;
      litert_api = "ai-edge-litert " + api.version + "'s libLiteRt.so, a CompiledModel as litert-benchmark runs it";
    } catch (const Error& e) {
      litert_api = std::string("unavailable: ") + e.what();
    }
    const std::string litert_text =
        "runtime=litert" + std::string(litert_default ? " (default)" : "") + ": LiteRT's C API, " + litert_api;
    const std::string c_text = "runtime=c" + std::string(litert_default ? "" : " (default)") + ": " + c_api;
    return declared_backend_info(tflite_settings::kBackend, version, {"cpu"},
                                 litert_text + "; " + c_text + "; see docs/backends.md", tflite_settings::options());
  }

  BackendCapabilities capabilities() const override { return {.generators = false}; }
  std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) override {
    try {
      return open_session(model, options);
    } catch (const Error& e) {
      throw Error("cannot load " + model.string() + " with backend 'tflite': " + e.what());
    }
  }
};

}  // namespace
}  // namespace infermark

INFERMARK_DEFINE_BACKEND(infermark::TfliteBackend)

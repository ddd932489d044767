// The framework plugins an integration test program loads: one registry over the build's plugin
// folder, and each backend loaded once, on first use, for every test file of the program.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/input_generator.hpp"

namespace infermark::test_support {

inline const BackendRegistry& registry() {
  static BackendRegistry r{INFERMARK_PLUGIN_DIR};
  return r;
}

inline Backend& backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<LoadedBackend>> loaded;
  auto& slot = loaded[name];
  if (!slot) slot = registry().load(name);
  return **slot;
}

// One session of `name` on `model`: `inputs` bound, run once, its outputs.
inline std::vector<Tensor> run_with(const std::string& name, const std::filesystem::path& model,
                                    const std::vector<Tensor>& inputs, const SessionOptions& options = {}) {
  auto session = backend(name).open(model, options);
  session->set_inputs(inputs, 1);
  session->run(0);
  return session->outputs();
}

// Generated inputs of `batch` for the ONNX file `model` (its specs as ONNX Runtime reads them),
// to feed the same bytes to a converted copy and its original.
inline std::vector<Tensor> onnx_inputs(const std::filesystem::path& model, int batch) {
  InputRequest request;
  request.batch = batch;
  return generate_inputs(backend("onnxruntime").open(model, {})->input_specs(), request);
}

}  // namespace infermark::test_support

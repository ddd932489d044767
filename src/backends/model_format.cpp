#include "backends/backend.hpp"

namespace infermark {

std::string model_format(const std::filesystem::path& model) {
  const auto ext = model.extension().string();
  if (ext == ".onnx") return "onnx";
  if (ext == ".xml") return "openvino-ir";
  if (ext == ".pt" || ext == ".torchscript") return "torchscript";
  if (ext == ".tflite") return "tflite";
  if (ext == ".gguf") return "gguf";
  return "";
}

}  // namespace infermark

// A model's name as results, cell names and the zoo's manifests use it: the file name without the
// extensions of its format. Most formats have one (resnet50.onnx); ncnn's files carry two, as its
// converter pnnx writes them (efficientnet_lite0.ncnn.param beside efficientnet_lite0.ncnn.bin),
// so that an ncnn model is named, and cross-checked, as the ONNX file it came from.
#pragma once

#include <filesystem>
#include <string>

namespace infermark {

// resnet50.onnx -> resnet50; efficientnet_lite0.ncnn.param -> efficientnet_lite0; a model folder
// (smollm2.genai/) -> smollm2.
std::string model_name(const std::filesystem::path& model);

}  // namespace infermark

// The zoo's offline accuracy figures for a reduced-precision model file, read from its manifest:
// how its outputs agreed with the FP32 original's (same format, same runtime) on the zoo's fixed
// inputs. Shown by `run` and `report` beside the speed numbers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace infermark::report {

// One line, e.g. "zoo accuracy of resnet50_int8.onnx against its FP32 original (onnxruntime
// 1.30.0; 32 seeded images): logits top-1 75.0%, top-5 100.0%, cos 0.99974, max abs err 3.5,
// mean abs err 0.38"; "" when the model has no manifest or the manifest no figures for its format.
// A malformed manifest gives a note saying so (the measurements beside it are never lost).
std::string zoo_accuracy_note(const std::filesystem::path& model);

// The notes of every distinct model path, each indented by `indent` and ending in a newline.
std::string zoo_accuracy_notes(const std::vector<std::string>& model_paths, const std::string& indent);

}  // namespace infermark::report

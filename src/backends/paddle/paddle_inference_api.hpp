// The part of Paddle Inference's C++ API this backend calls, declared here because no registry
// ships its headers: PyPI's paddlepaddle wheel carries the library (paddle/base/libpaddle.so, the
// C++ API exported with the C++11 string ABI) but only the custom-operator headers. Each
// declaration matches the exported symbol of Paddle 3.3.1 (`nm -DC libpaddle.so`), so the linker
// resolves them by their mangled names and a library whose signatures changed does not link; the
// backend refuses any other version at load (paddle_infer::GetVersion()).
//
// Layout: the backend never depends on these classes' members. paddle_infer::Predictor and
// paddle_infer::Tensor only come from the library (through std::shared_ptr / std::unique_ptr,
// whose layout is the standard library's); paddle::AnalysisConfig is the one object the caller
// constructs, so it is constructed in a buffer far larger than the library's object (its copy
// constructor writes up to offset 0x658 in 3.3.1) and destroyed through its exported destructor.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace paddle {

// paddle_infer::Config. Not polymorphic in 3.3.1 (the library exports no vtable for it).
class AnalysisConfig {
 public:
  AnalysisConfig();
  ~AnalysisConfig();
  AnalysisConfig(const AnalysisConfig&) = delete;
  AnalysisConfig& operator=(const AnalysisConfig&) = delete;

  // A PIR program (model.json) and its parameters (model.pdiparams).
  void SetModel(const std::string& prog_file_path, const std::string& params_file_path);
  void DisableGpu();
  void EnableMKLDNN();
  void DisableMKLDNN();
  void SetCpuMathLibraryNumThreads(int cpu_math_library_num_threads);
  int cpu_math_library_num_threads() const;
  void DisableGlogInfo();
  // Removes an analysis pass from the optimisation the predictor runs.
  void DeletePass(const std::string& pass_name);
};

}  // namespace paddle

namespace paddle_infer {

using Config = paddle::AnalysisConfig;

// An input or output of a predictor; made by the library only.
class Tensor {
 public:
  Tensor() = delete;
  void Reshape(const std::vector<int>& shape);
  template <typename T>
  void CopyFromCpu(const T* data);
  template <typename T>
  void CopyToCpu(T* data) const;
  std::vector<int> shape() const;
};

// Made by CreatePredictor only, and destroyed by the deleter the library's shared_ptr carries.
class Predictor {
 public:
  Predictor() = delete;
  std::vector<std::string> GetInputNames();
  std::vector<std::string> GetOutputNames();
  std::unique_ptr<Tensor> GetInputHandle(const std::string& name);
  std::unique_ptr<Tensor> GetOutputHandle(const std::string& name);
  bool Run();
};

std::shared_ptr<Predictor> CreatePredictor(const Config& config);
// "version: 3.3.1\ncommit: ...\nbranch: ..."
std::string GetVersion();

// The instantiations the library exports for float32 and int64.
extern template void Tensor::CopyFromCpu<float>(const float*);
extern template void Tensor::CopyFromCpu<long>(const long*);
extern template void Tensor::CopyToCpu<float>(float*) const;
extern template void Tensor::CopyToCpu<long>(long*) const;

}  // namespace paddle_infer

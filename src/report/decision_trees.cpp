#include "report/decision_trees.hpp"

#include <array>

namespace infermark::report {
namespace {

using enum DecisionTree;
using enum DeploymentSituation;
using enum BranchEvidence;
using enum MeasuredContext;

constexpr std::string_view kNvidia = "an NVIDIA GPU and a TensorRT backend (infermark has none)";

constexpr std::array kBranches{
    // Which framework for the deployment scenario
    DecisionTreeBranch{kFrameworkForScenario, kLatencyCritical, "latency-critical", "TensorRT", "FastDeploy, CUDA Graph on",
                       kNotMeasurable, "", kNvidia, kLowestLatency},
    DecisionTreeBranch{kFrameworkForScenario, kHighThroughputBatch, "high-throughput batch",
                       "ONNX Runtime + dynamic batching, max_batch_size 32", "", kHighestThroughput, "onnxruntime", "", kNone},
    DecisionTreeBranch{kFrameworkForScenario, kDomesticHardware, "domestic hardware", "FastDeploy", "test on an Ascend NPU",
                       kNotMeasurable, "",
                       "an Ascend NPU and FastDeploy on it (infermark runs FastDeploy's CPU runtime, Paddle Inference, on the "
                       "CPU only)",
                       kNone},
    DecisionTreeBranch{kFrameworkForScenario, kEdgeCpu, "edge CPU", "OpenVINO + 4-bit", "", kObjective, "openvino", "", kNone},
    DecisionTreeBranch{kFrameworkForScenario, kArmGpu, "ARM GPU", "TensorRT", "", kNotMeasurable, "",
                       "an ARM board with an NVIDIA GPU (Jetson) and a TensorRT backend (infermark has none)", kNone},
    // The edge pair on ARM without a GPU: judged on the better of the two against every other framework.
    DecisionTreeBranch{kFrameworkForScenario, kArmEdgeCpu, "ARM edge CPU", "TFLite + ncnn", "", kObjective, "tflite+ncnn", "",
                       kNone},
    // Which framework to choose, in priority order
    // Paddle Inference and MNN run here on the CPU, so the branch is judged on the objective among
    // the CPU cells (the better of the two against every other framework); the accelerators it is
    // about are not measured, which the detail says.
    DecisionTreeBranch{kFrameworkByPriority, kDomesticHardware, "domestic hardware", "Paddle / MNN", "", kObjective, "paddle+mnn",
                       "judged on this machine's CPU: the domestic accelerators the branch is about (Ascend, Kunlun, Cambricon) "
                       "are not measured here",
                       kNone},
    DecisionTreeBranch{kFrameworkByPriority, kDynamicShapes, "dynamic shapes", "ONNX Runtime", "", kShapeCliff, "onnxruntime", "",
                       kNone},
    DecisionTreeBranch{kFrameworkByPriority, kMaximumPerformance, "maximum performance", "TensorRT", "", kNotMeasurable, "",
                       kNvidia, kLowestLatency},
    DecisionTreeBranch{kFrameworkByPriority, kFastIteration, "fast iteration", "PyTorch", "", kNotMeasurable, "",
                       "a measure of development time, which an inference benchmark does not take", kLibTorch},
    // Which engine for the model and workload
    DecisionTreeBranch{kEngineForWorkload, kDynamicControlFlow, "dynamic control flow", "PyTorch / JAX", "", kNotMeasurable, "",
                       "a model with data-dependent control flow run eagerly (infermark runs exported graphs; no JAX backend)",
                       kLibTorch},
    DecisionTreeBranch{kEngineForWorkload, kFixedInputSize, "fixed input size", "TensorRT", "", kNotMeasurable, "", kNvidia,
                       kLowestLatency},
    DecisionTreeBranch{kEngineForWorkload, kLongGeneration, "long generation", "vLLM", "", kNotMeasurable, "",
                       "a vLLM server measured with `infermark load URL --protocol openai` (on a GPU)", kGeneration},
    DecisionTreeBranch{kEngineForWorkload, kMultiBackend, "multi-backend", "ONNX Runtime", "", kRunsTheModel, "onnxruntime",
                       "running on other hardware (execution providers) is not measured here", kNone},
};

struct TreeSource {
  DecisionTree tree;
  std::string_view name;
  FieldGuide guide;
  std::string_view section;
  bool priority_order;
};

constexpr TreeSource kTrees[] = {
    {kFrameworkForScenario, "Which framework for the deployment scenario", FieldGuide::kPerformanceEvaluation, "decision tree §5",
     false},
    {kFrameworkByPriority, "Which framework to choose, in priority order", FieldGuide::kSelectionAndPractice, "decision path §6",
     true},
    {kEngineForWorkload, "Which engine for the model and workload", FieldGuide::kPerformanceTesting, "LLM decision tree §6",
     false},
};

const TreeSource& source_of(DecisionTree tree) {
  for (const auto& t : kTrees)
    if (t.tree == tree) return t;
  return kTrees[0];
}

}  // namespace

std::span<const DecisionTreeBranch> all_decision_tree_branches() { return kBranches; }

std::string_view name_of(DecisionTree tree) { return source_of(tree).name; }

FieldGuide guide_of(DecisionTree tree) { return source_of(tree).guide; }

std::string_view section_of(DecisionTree tree) { return source_of(tree).section; }

bool is_priority_order(DecisionTree tree) { return source_of(tree).priority_order; }

}  // namespace infermark::report

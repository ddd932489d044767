#include "report/seed_decision_trees.hpp"

#include <array>

namespace infermark::report {
namespace {

using enum DeploymentSituation;
using enum BranchEvidence;
using enum MeasuredContext;

constexpr std::string_view kNvidia = "an NVIDIA GPU and a TensorRT backend (infermark has none)";

constexpr std::array kBranches{
    // seed 000 §5
    SeedBranch{"000", "§5", kLatencyCritical, "latency-critical", "TensorRT", "FastDeploy, CUDA Graph on", kNotMeasurable, "",
               kNvidia, kLowestLatency},
    SeedBranch{"000", "§5", kHighThroughputBatch, "high-throughput batch", "ONNX Runtime + dynamic batching, max_batch_size 32",
               "", kHighestThroughput, "onnxruntime", "", kNone},
    SeedBranch{"000", "§5", kDomesticHardware, "domestic hardware", "FastDeploy", "test on an Ascend NPU", kNotMeasurable, "",
               "an Ascend NPU and a FastDeploy backend (infermark has neither)", kNone},
    SeedBranch{"000", "§5", kEdgeCpu, "edge CPU", "OpenVINO + 4-bit", "", kObjective, "openvino", "", kNone},
    SeedBranch{"000", "§5", kArmGpu, "ARM GPU", "TensorRT", "", kNotMeasurable, "",
               "an ARM board with an NVIDIA GPU (Jetson) and a TensorRT backend (infermark has none)", kNone},
    // seed 002 §6, in its priority order
    SeedBranch{"002", "§6", kDomesticHardware, "domestic hardware", "Paddle / MNN", "", kNotMeasurable, "",
               "domestic hardware and a Paddle Inference or MNN backend (infermark has neither)", kNone},
    SeedBranch{"002", "§6", kDynamicShapes, "dynamic shapes", "ONNX Runtime", "", kShapeCliff, "onnxruntime", "", kNone},
    SeedBranch{"002", "§6", kMaximumPerformance, "maximum performance", "TensorRT", "", kNotMeasurable, "", kNvidia,
               kLowestLatency},
    SeedBranch{"002", "§6", kFastIteration, "fast iteration", "PyTorch", "", kNotMeasurable, "",
               "a measure of development time, which an inference benchmark does not take", kLibTorch},
    // seed 003 §6
    SeedBranch{"003", "§6", kDynamicControlFlow, "dynamic control flow", "PyTorch / JAX", "", kNotMeasurable, "",
               "a model with data-dependent control flow run eagerly (infermark runs exported graphs; no JAX backend)",
               kLibTorch},
    SeedBranch{"003", "§6", kFixedInputSize, "fixed input size", "TensorRT", "", kNotMeasurable, "", kNvidia, kLowestLatency},
    SeedBranch{"003", "§6", kLongGeneration, "long generation", "vLLM", "", kNotMeasurable, "",
               "a vLLM server measured with `infermark load URL --protocol openai` (on a GPU)", kGeneration},
    SeedBranch{"003", "§6", kMultiBackend, "multi-backend", "ONNX Runtime", "", kRunsTheModel, "onnxruntime",
               "running on other hardware (execution providers) is not measured here", kNone},
};

}  // namespace

std::span<const SeedBranch> seed_decision_trees() { return kBranches; }

bool is_priority_order(std::string_view seed) { return seed == "002"; }

}  // namespace infermark::report

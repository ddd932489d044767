// ExecuTorch on the programs the zoo exports from tiny_cnn's ONNX file (`infermark zoo build
// tiny-cnn-executorch`, PyTorch 2.x in the on-demand third_party/llm-venv): ctest runs that build
// first (fixture executorch_models, tests/CMakeLists.txt), so these tests never skip for want of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "integration/loaded_backends.hpp"
#include "stats/output_agreement.hpp"

namespace infermark {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = INFERMARK_MODELS_DIR;
const fs::path kFp32 = kModels / "tiny_cnn.pte";
const fs::path kInt8 = kModels / "tiny_cnn_int8.pte";

using test_support::backend;
using test_support::onnx_inputs;
using test_support::registry;
using test_support::run_with;

std::string setting(const Session& session, const std::string& key) {
  for (const auto& s : session.effective_settings())
    if (s.key == key) return s.effective + (s.state == SettingState::kVerified ? "" : " (" + std::string(name_of(s.state)) + ")");
  return "";
}

class Executorch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!registry().is_available("executorch")) GTEST_SKIP() << "executorch is not built in this configuration";
    ASSERT_TRUE(fs::exists(kFp32)) << kFp32 << " is missing: the fixture test zoo_build_executorch_test_models builds it";
  }
};

TEST_F(Executorch, NamesTensorsFromTheZooManifestAndKeepsTheDynamicBatch) {
  const auto session = backend("executorch").open(kFp32, {});
  ASSERT_EQ(session->input_specs().size(), 1u);
  EXPECT_EQ(session->input_specs()[0].name, "input");
  EXPECT_EQ(session->input_specs()[0].shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
  ASSERT_EQ(session->output_specs().size(), 1u);
  EXPECT_EQ(session->output_specs()[0].name, "logits");
}

TEST_F(Executorch, ComputesWhatOnnxRuntimeComputesOnTheSameWeights) {
  for (const int batch : {1, 4, 8}) {
    const auto inputs = onnx_inputs(kModels / "tiny_cnn.onnx", batch);
    const auto expected = run_with("onnxruntime", kModels / "tiny_cnn.onnx", inputs);
    const auto actual = run_with("executorch", kFp32, inputs);
    ASSERT_EQ(actual.at(0).shape, (std::vector<std::int64_t>{batch, 10}));
    const auto agreement = stats::compare_outputs(expected, actual).at(0);
    ASSERT_TRUE(agreement.comparable) << agreement.note;
    EXPECT_LT(agreement.max_abs_error, 1e-4) << "batch " << batch;
  }
}

// The program's inputs live in planned memory that later operators may reuse: one binding run
// three times must give the same outputs each time (each run sets the inputs again).
TEST_F(Executorch, OneBindingRunThreeTimesGivesTheSameOutputs) {
  auto session = backend("executorch").open(kFp32, {});
  session->set_inputs(onnx_inputs(kModels / "tiny_cnn.onnx", 3), 1);
  session->run(0);
  const auto first = session->outputs();
  for (int i = 0; i < 2; ++i) {
    session->run(0);
    EXPECT_EQ(session->outputs().at(0).data, first.at(0).data) << "run " << i + 2;
  }
  EXPECT_EQ(setting(*session, "input_copy"), "in each timed call");
}

TEST_F(Executorch, ABatchBeyondTheExportedBoundFailsNamingTheInput) {
  auto session = backend("executorch").open(kFp32, {});
  try {
    session->set_inputs(onnx_inputs(kModels / "tiny_cnn.onnx", 9), 1);
    FAIL() << "a batch of 9 was bound to a program exported for 1..8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'input'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fixed at export"), std::string::npos) << e.what();
  }
}

TEST_F(Executorch, AppliesThreadsAndReadsThemBack) {
  std::vector<int> counts{1};
  if (std::thread::hardware_concurrency() >= 2) counts.push_back(2);
  for (const int threads : counts) {
    SessionOptions options;
    options.intra_op_threads = threads;
    EXPECT_EQ(setting(*backend("executorch").open(kFp32, options), "intra_op_threads"), std::to_string(threads));
  }
}

TEST_F(Executorch, SaysPrecisionIsTheProgramsOwn) {
  EXPECT_EQ(setting(*backend("executorch").open(kFp32, {}), "precision"), "as the program's weights");
  SessionOptions options;
  options.precision = "fp16";
  EXPECT_EQ(setting(*backend("executorch").open(kFp32, options), "precision"), "as the program's weights (not_applied)");
}

TEST_F(Executorch, Int8ProgramStaysCloseToFp32) {
  ASSERT_TRUE(fs::exists(kInt8));
  const auto inputs = onnx_inputs(kModels / "tiny_cnn.onnx", 8);
  const auto fp32 = run_with("executorch", kFp32, inputs);
  const auto int8 = run_with("executorch", kInt8, inputs);
  const auto agreement = stats::compare_outputs(fp32, int8).at(0);
  ASSERT_TRUE(agreement.comparable) << agreement.note;
  EXPECT_GT(agreement.max_abs_error, 0.0) << "the INT8 program computed exactly FP32's outputs";
  EXPECT_GT(agreement.cosine_similarity, 0.95);
}

// Without the zoo's manifest the program's own shapes and placeholder names are used; a manifest
// that disagrees with the program is refused naming it.
TEST_F(Executorch, WithoutAManifestUsesTheProgramsShapesAndRefusesOneThatDisagrees) {
  const auto dir = fs::temp_directory_path() / "infermark_executorch_manifest";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kFp32, dir / "bare.pte");
  const auto bare = backend("executorch").open(dir / "bare.pte", {});
  EXPECT_EQ(bare->input_specs().at(0).name, "input_0");
  EXPECT_EQ(bare->input_specs().at(0).shape.size(), 4u);
  EXPECT_EQ(bare->output_specs().at(0).name, "output_0");

  fs::copy_file(kFp32, dir / "wrong.pte");
  std::ofstream(dir / "wrong.json") << R"({"inputs": [{"name": "ids", "dtype": "int64", "shape": ["batch", 8]}],
                                          "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", 10]}]})";
  try {
    backend("executorch").open(dir / "wrong.pte", {});
    FAIL() << "a manifest declaring an int64 input was accepted for a float program";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrong.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'ids'"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST_F(Executorch, RefusesAFileThatIsNotAProgramNamingIt) {
  const auto path = fs::temp_directory_path() / "not_a_program.pte";
  std::ofstream(path) << "this is not an ExecuTorch program";
  try {
    backend("executorch").open(path, {});
    FAIL() << "opened a text file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  fs::remove(path);
}

}  // namespace
}  // namespace infermark

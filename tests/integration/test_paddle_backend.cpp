// Paddle Inference on tiny_cnn converted by X2Paddle (scripts/setup's test models: models/tiny_cnn.paddle/),
// through the C++ API the backend declares for Paddle 3.3.1.
#include <gtest/gtest.h>

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
const fs::path kFolder = kModels / "tiny_cnn.paddle";

using test_support::backend;
using test_support::registry;
using test_support::run_with;

std::vector<Tensor> tiny_inputs(int batch) { return test_support::onnx_inputs(kModels / "tiny_cnn.onnx", batch); }

const EffectiveSetting& setting(const std::vector<EffectiveSetting>& settings, const std::string& key) {
  for (const auto& s : settings)
    if (s.key == key) return s;
  throw std::out_of_range(key);
}

std::string error_opening(const fs::path& model) {
  try {
    backend("paddle").open(model, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class Paddle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!registry().is_available("paddle")) GTEST_SKIP() << "paddle is not built in this configuration";
  }
};

TEST_F(Paddle, ReportsTheVersionItsDeclarationsAreFor) { EXPECT_EQ(backend("paddle").info().version, "3.3.1"); }

TEST_F(Paddle, NamesTensorsAsTheOnnxOriginalFromTheManifest) {
  const auto session = backend("paddle").open(kFolder, {});
  ASSERT_EQ(session->input_specs().size(), 1u);
  EXPECT_EQ(session->input_specs()[0].name, "input");
  EXPECT_EQ(session->input_specs()[0].shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
  EXPECT_EQ(session->output_specs().at(0).name, "logits");
}

TEST_F(Paddle, ComputesWhatOnnxRuntimeComputesOnTheSameWeights) {
  for (const int batch : {1, 4, 16}) {
    const auto inputs = tiny_inputs(batch);
    const auto expected = run_with("onnxruntime", kModels / "tiny_cnn.onnx", inputs);
    for (const char* mkldnn : {"on", "off"}) {
      SessionOptions options;
      options.extras["mkldnn"] = mkldnn;
      const auto actual = run_with("paddle", kFolder, inputs, options);
      ASSERT_EQ(actual.at(0).shape, (std::vector<std::int64_t>{batch, 10}));
      const auto agreement = stats::compare_outputs(expected, actual).at(0);
      ASSERT_TRUE(agreement.comparable) << agreement.note;
      EXPECT_LT(agreement.max_abs_error, 1e-4) << "batch " << batch << ", mkldnn " << mkldnn;
    }
  }
}

TEST_F(Paddle, OneBindingRunThreeTimesGivesTheSameOutputs) {
  auto session = backend("paddle").open(kFolder, {});
  session->set_inputs(tiny_inputs(3), 1);
  session->run(0);
  const auto first = session->outputs();
  for (int i = 0; i < 2; ++i) {
    session->run(0);
    EXPECT_EQ(session->outputs().at(0).data, first.at(0).data) << "run " << i + 2;
  }
}

// Paddle's helper threads make a count no proof of its team's size: the setting is applied and
// said to be unverified, with what was counted.
TEST_F(Paddle, ThreadsAreSetAndReportedUnverifiedWithTheCount) {
  std::vector<int> counts{1};
  if (std::thread::hardware_concurrency() >= 2) counts.push_back(2);
  for (const int threads : counts) {
    SessionOptions options;
    options.intra_op_threads = threads;
    const auto s = setting(backend("paddle").open(kFolder, options)->effective_settings(), "intra_op_threads");
    EXPECT_EQ(s.state, SettingState::kUnverified) << threads << ": " << s.note;
    EXPECT_EQ(s.effective, std::to_string(threads)) << s.note;
    EXPECT_NE(s.note.find("SetCpuMathLibraryNumThreads(" + std::to_string(threads) + ") set"), std::string::npos) << s.note;
  }
}

TEST_F(Paddle, Int8OfAnFp32FolderIsNotAppliedAndSaysSo) {
  SessionOptions options;
  options.precision = "int8";
  const auto s = setting(backend("paddle").open(kFolder, options)->effective_settings(), "precision");
  EXPECT_EQ(s.state, SettingState::kNotApplied);
  EXPECT_EQ(s.effective, "fp32");
}

TEST_F(Paddle, MissingFilesAndManifestsAreNamed) {
  const auto dir = fs::temp_directory_path() / "infermark_paddle_folders";
  fs::remove_all(dir);
  fs::create_directories(dir / "no_params.paddle");
  fs::copy_file(kFolder / "model.json", dir / "no_params.paddle" / "model.json");
  EXPECT_NE(error_opening(dir / "no_params.paddle").find("model.pdiparams is missing"), std::string::npos);

  fs::copy(kFolder, dir / "no_manifest.paddle");
  const auto message = error_opening(dir / "no_manifest.paddle");
  EXPECT_NE(message.find("no_manifest.json"), std::string::npos) << message;

  fs::copy(kFolder, dir / "wrong.paddle");
  std::ofstream(dir / "wrong.json") << R"({"inputs": [{"name": "a", "dtype": "float32", "shape": ["batch", 3, 32, 32]},
                                                   {"name": "b", "dtype": "float32", "shape": ["batch", 3, 32, 32]}],
                                          "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", 10]}]})";
  const auto wrong = error_opening(dir / "wrong.paddle");
  EXPECT_NE(wrong.find("the program has 1 inputs, " + (dir / "wrong.json").string() + " declares 2"), std::string::npos) << wrong;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infermark

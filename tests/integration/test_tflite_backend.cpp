// The tflite backend on its two runtimes, both installed by scripts/setup: LiteRT's own C API on
// ai-edge-litert's libLiteRt.so (runtime=litert, the default) and TfLite's C library from
// litert-lm-api (runtime=c), with real .tflite models:
// tiny_cnn_tflite.tflite carries tiny_cnn.onnx's weights, so ONNX Runtime on the ONNX original must
// compute the same function, and Google's MediaPipe models run on photos.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "backends/registry.hpp"
#include "integration/loaded_backends.hpp"
#ifdef INFERMARK_TFLITE_C_LIBRARY
#include "backends/tflite/tflite_c_api.hpp"
#endif
#ifdef INFERMARK_LITERT_LIBRARY
#include "backends/tflite/litert_c_api.hpp"
#endif
#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "core/npy.hpp"

namespace infermark {
namespace {

const std::filesystem::path kModels = INFERMARK_MODELS_DIR;
const std::filesystem::path kTinyTflite = kModels / "tiny_cnn_tflite.tflite";

class TfliteBackendTest : public ::testing::Test {
 protected:
  static const BackendRegistry& registry() { return test_support::registry(); }
  static Backend& load(const std::string& name) { return test_support::backend(name); }
  void SetUp() override {
    if (!registry().is_available("tflite")) GTEST_SKIP() << "tflite is not built in this configuration";
  }
  static Backend& tflite() { return load("tflite"); }

  // On TfLite's C API (runtime=c), the runtime that can also turn XNNPACK off.
  static SessionOptions with_xnnpack(const std::string& value, int threads = 0) {
    SessionOptions options;
    options.intra_op_threads = threads;
    options.extras["xnnpack"] = value;
    options.extras["runtime"] = "c";
    return options;
  }
  static SessionOptions with_runtime(const std::string& runtime, int threads = 0) {
    auto options = with_xnnpack("on", threads);
    options.extras["runtime"] = runtime;
    return options;
  }
  // Batch-4 seeded inputs for tiny_cnn's spec; the same tensors feed every framework.
  static std::vector<Tensor> tiny_inputs(const Session& session) {
    InputRequest request;
    request.batch = 4;
    return generate_inputs(session.input_specs(), request);
  }

  static std::vector<Tensor> infer(Session& session, const std::vector<Tensor>& inputs, int slots = 1) {
    session.set_inputs(inputs, slots);
    for (int slot = 0; slot < slots; ++slot) session.run(slot);
    return session.outputs();
  }

  static double max_abs_difference(const Tensor& a, const Tensor& b) {
    EXPECT_EQ(a.shape, b.shape);
    double worst = 0;
    for (std::size_t i = 0; i < std::min(a.element_count(), b.element_count()); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(a.as<float>()[i] - b.as<float>()[i])));
    return worst;
  }

  static EffectiveSetting setting(const Session& session, const std::string& key) {
    for (const auto& s : session.effective_settings())
      if (s.key == key) return s;
    ADD_FAILURE() << "no effective setting " << key;
    return {};
  }
};

// runtime=litert: LiteRT's own C API on ai-edge-litert's libLiteRt.so (what litert-benchmark runs),
// or nullptr where this build found no such library.
std::unique_ptr<Session> open_litert(Backend& backend, const std::filesystem::path& model, int threads) {
  SessionOptions options;
  options.intra_op_threads = threads;
  options.extras["runtime"] = "litert";
  try {
    return backend.open(model, options);
  } catch (const Error& e) {
    if (std::string(e.what()).find("this build found no ai-edge-litert") != std::string::npos) return nullptr;
    throw;
  }
}

TEST_F(TfliteBackendTest, ReportsTheRuntimeItLoadedAndWhereItCameFrom) {
  const auto info = tflite().info();
  EXPECT_EQ(info.name, "tflite");
  EXPECT_EQ(info.formats, std::vector<std::string>{"tflite"});
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(info.version.at(0)))) << info.version;
#ifdef INFERMARK_LITERT_LIBRARY
  EXPECT_EQ(info.version, "2.3.0") << "ai-edge-litert's, the default runtime's";
  EXPECT_NE(info.notes.find("runtime=litert (default): LiteRT's C API, ai-edge-litert 2.3.0's libLiteRt.so"), std::string::npos)
      << info.notes;
#else
  EXPECT_EQ(info.version, "2.23.0");
#endif
  EXPECT_NE(info.notes.find("TfLite 2.23.0's C API from litert-lm-api"), std::string::npos) << info.notes;
  EXPECT_EQ(info.notes.find("runtime=python"), std::string::npos) << "the Python API runtime is gone: " << info.notes;
}

TEST_F(TfliteBackendTest, ReadsTheModelsTensorSpecs) {
  std::vector<std::unique_ptr<Session>> sessions;
  sessions.push_back(tflite().open(kTinyTflite, with_runtime("c")));
  sessions.push_back(open_litert(tflite(), kTinyTflite, 1));  // LiteRT's -1 comes from TfLite's reading of the file
  for (const auto& session : sessions) {
    if (!session) continue;  // no ai-edge-litert in this build
    ASSERT_EQ(session->input_specs().size(), 1u);
    EXPECT_EQ(session->input_specs()[0].name, "input");
    EXPECT_EQ(session->input_specs()[0].dtype, DType::kFloat32);
    EXPECT_EQ(session->input_specs()[0].shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
    ASSERT_EQ(session->output_specs().size(), 1u);
    EXPECT_EQ(session->output_specs()[0].name, "logits");
  }
}

TEST_F(TfliteBackendTest, AgreesWithOnnxRuntimeOnTheSameWeights) {
  if (!registry().is_available("onnxruntime")) GTEST_SKIP() << "onnxruntime is not built in this configuration";
  auto session = tflite().open(kTinyTflite, with_runtime("c"));
  const auto inputs = tiny_inputs(*session);
  const auto actual = infer(*session, inputs);
  auto reference = load("onnxruntime").open(kModels / "tiny_cnn.onnx", {});
  const auto expected = infer(*reference, inputs);
  ASSERT_EQ(actual.at(0).shape, (std::vector<std::int64_t>{4, 10}));
  EXPECT_LT(max_abs_difference(actual.at(0), expected.at(0)), 1e-4);
}

TEST_F(TfliteBackendTest, XnnpackOnAndOffBothRunAgreeAndAreReportedAsApplied) {
  auto on = tflite().open(kTinyTflite, with_xnnpack("on"));
  auto off = tflite().open(kTinyTflite, with_xnnpack("off"));
  const auto inputs = tiny_inputs(*on);
  EXPECT_LT(max_abs_difference(infer(*on, inputs).at(0), infer(*off, inputs).at(0)), 1e-4);

  const auto xnnpack_on = setting(*on, "xnnpack");
  EXPECT_TRUE(xnnpack_on.applied()) << xnnpack_on.note;
  EXPECT_EQ(xnnpack_on.effective.rfind("on (", 0), 0u) << xnnpack_on.effective;
  const auto xnnpack_off = setting(*off, "xnnpack");
  EXPECT_TRUE(xnnpack_off.applied());
  EXPECT_EQ(xnnpack_off.effective, "off");
}

TEST_F(TfliteBackendTest, TheCApiAppliesThreadsToInterpreterAndXnnpack) {
#ifdef INFERMARK_LITERT_LIBRARY
  EXPECT_EQ(setting(*tflite().open(kTinyTflite, {}), "runtime").effective, "litert") << "the default";
#endif
  auto session = tflite().open(kTinyTflite, with_xnnpack("on", 2));
  EXPECT_EQ(setting(*session, "runtime").effective, "c");
  EXPECT_NE(setting(*session, "runtime_api").effective.find("TfLite 2.23.0's C API"), std::string::npos);
  EXPECT_EQ(session->library_version(), "TfLite 2.23.0") << "results name the library that ran, not the default runtime's";
  // Counted: the XNNPACK delegate's pool, started with it.
  const auto threads = setting(*session, "intra_op_threads");
  EXPECT_EQ(threads.requested, "2");
  EXPECT_EQ(threads.effective, "2");
  EXPECT_EQ(threads.state, SettingState::kVerified) << threads.note;
  // Without XNNPACK, TfLite's kernels start their pool lazily and the C API cannot report it.
  const auto builtin = setting(*tflite().open(kTinyTflite, with_xnnpack("off", 2)), "intra_op_threads");
  EXPECT_EQ(builtin.effective, "2");
  EXPECT_EQ(builtin.state, SettingState::kUnverified);
  EXPECT_FALSE(builtin.note.empty());
  // Read back from the delegate TfLite built, not echoed from the request.
  const auto xnnpack = setting(*session, "xnnpack");
  EXPECT_EQ(xnnpack.effective, "on (delegate added, 2 thread(s))");
  EXPECT_TRUE(xnnpack.applied()) << xnnpack.note;
}

// runtime=python (LiteRT's Python API in an embedded CPython) was dropped once runtime=litert
// proved faithful to litert-benchmark; asking for it says what to use instead.
TEST_F(TfliteBackendTest, TheRemovedPythonRuntimeIsAnErrorNamingTheReplacement) {
  try {
    tflite().open(kTinyTflite, with_runtime("python"));
    FAIL() << "accepted runtime=python";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runtime=python was removed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use litert or c"), std::string::npos) << e.what();
  }
}

TEST_F(TfliteBackendTest, AnUnknownRuntimeIsAnErrorNamingTheOption) {
  try {
    tflite().open(kTinyTflite, with_runtime("java"));
    FAIL() << "accepted runtime=java";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runtime=java is none of c, litert"), std::string::npos) << e.what();
  }
}

#ifdef INFERMARK_TFLITE_C_LIBRARY
// The declarations of what the AAR headers lack match TfLite 2.23.0 only: the real library is
// refused when another version is expected, and a library without the C API is refused too.
TEST_F(TfliteBackendTest, TheCLibraryIsRefusedWhenItReportsAnotherVersion) {
  EXPECT_EQ(TfliteCApi::open(INFERMARK_TFLITE_C_LIBRARY).version, "2.23.0");
  try {
    TfliteCApi::open(INFERMARK_TFLITE_C_LIBRARY, "2.12.0");
    FAIL() << "accepted TfLite 2.23.0 where 2.12.0 was expected";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("reports TfLite 2.23.0"), std::string::npos) << message;
    EXPECT_NE(message.find("match TfLite 2.12.0 only"), std::string::npos) << message;
  }
  try {
    TfliteCApi::open("libm.so.6");
    FAIL() << "accepted libm as a TfLite C library";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not export TfLiteVersion"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TfliteCApi::open("/nonexistent/libtensorflowlite_c.so"), Error);
}
#endif

// Google's MediaPipe models (pretrained, copied unchanged from PyPI mediapipe by scripts/setup) on
// an opencv-doc photo through the C API: BlazeFace finds the face the zoo's build found with
// LiteRT's Python API (LiteRtRuntimeAgreesWithTheCRuntime compares the runtimes' outputs).
TEST_F(TfliteBackendTest, MediapipeModelsRunOnAPhotoThroughTheCApi) {
  for (const auto& [stem, input, output] : {std::tuple{"mediapipe_face_detection", "input", "classificators"},
                                            std::tuple{"mediapipe_selfie_segmentation", "input_1", "activation_10"}}) {
    SCOPED_TRACE(stem);
    const auto model = kModels / (std::string(stem) + ".tflite");
    const std::vector<Tensor> photo{read_npy(kModels / "inputs" / (std::string(stem) + ".npy"), input)};
    auto c = tflite().open(model, with_runtime("c", 1));
    EXPECT_EQ(c->input_specs().at(0).shape.back(), 3) << "NHWC, as the file declares";
    const auto outputs = infer(*c, photo);
    const auto found = std::find_if(outputs.begin(), outputs.end(), [&](const Tensor& t) { return t.name == output; });
    ASSERT_NE(found, outputs.end());
    const float* values = found->as<float>();
    const float largest = *std::max_element(values, values + found->element_count());
    if (std::string(stem) == "mediapipe_face_detection") {
      EXPECT_GT(1 / (1 + std::exp(-largest)), 0.5) << "no face found";
    }
  }
}

// Slots are separate interpreters (runtime=c) or compiled models (runtime=litert), run
// concurrently as the harness's concurrent clients do.
TEST_F(TfliteBackendTest, SlotsRunConcurrently) {
  for (const std::string runtime : {"c", "litert"}) {
    SCOPED_TRACE(runtime);
    std::unique_ptr<Session> single;
    try {
      single = tflite().open(kTinyTflite, with_runtime(runtime));
    } catch (const Error& e) {
      if (std::string(e.what()).find("this build found no ai-edge-litert") != std::string::npos) continue;
      throw;
    }
    const auto inputs = generate_inputs(single->input_specs(), {});
    const auto expected = infer(*single, inputs);
    auto session = tflite().open(kTinyTflite, with_runtime(runtime));
    session->set_inputs(inputs, 3);
    std::vector<std::thread> clients;
    for (int slot = 0; slot < 3; ++slot)
      clients.emplace_back([&session, slot] {
        for (int i = 0; i < 5; ++i) session->run(slot);
      });
    for (auto& client : clients) client.join();
    EXPECT_LT(max_abs_difference(session->outputs().at(0), expected.at(0)), 1e-6);
  }
}

TEST_F(TfliteBackendTest, ABadFileIsAnErrorNamingTheFileAndTheBackend) {
  const auto path = std::filesystem::temp_directory_path() / "infermark_not_a_model.tflite";
  std::ofstream(path) << "this is not a TFLite flatbuffer";
  for (const std::string runtime : {"c", "litert"}) {
    try {
      tflite().open(path, with_runtime(runtime));
      FAIL() << "runtime=" << runtime << " opened a file that is not a model";
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.find("this build found no ai-edge-litert") != std::string::npos) continue;
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find("'tflite'"), std::string::npos) << message;
      EXPECT_NE(message.find("Flatbuffer"), std::string::npos) << runtime << ": " << message;
    }
  }
  std::filesystem::remove(path);
}

TEST_F(TfliteBackendTest, AMissingFileAndAnUnknownOptionValueAreErrors) {
  EXPECT_THROW(tflite().open(kModels / "no_such_model.tflite", {}), Error);
  try {
    tflite().open(kTinyTflite, with_xnnpack("sometimes"));
    FAIL() << "accepted xnnpack=sometimes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("xnnpack"), std::string::npos) << e.what();
  }
}

// The same model through both runtimes: LiteRT's C API computes what TfLite's C API computes, on
// tiny_cnn and on both MediaPipe models with their photos.
TEST_F(TfliteBackendTest, LiteRtRuntimeAgreesWithTheCRuntime) {
  struct Case {
    std::string stem, input;
  };
  for (const auto& [stem, input] : {Case{"tiny_cnn_tflite", ""}, Case{"mediapipe_face_detection", "input"},
                                    Case{"mediapipe_selfie_segmentation", "input_1"}}) {
    SCOPED_TRACE(stem);
    const auto model = kModels / (stem + ".tflite");
    auto litert = open_litert(tflite(), model, 2);
    if (!litert) GTEST_SKIP() << "this build found no ai-edge-litert";
    // tiny_cnn at batch 4: its declared batch is -1, so the compiled model is resized.
    const auto inputs =
        input.empty() ? tiny_inputs(*litert) : std::vector<Tensor>{read_npy(kModels / "inputs" / (stem + ".npy"), input)};
    ASSERT_EQ(litert->input_specs().size(), inputs.size());
    const auto actual = infer(*litert, inputs);
    auto c = tflite().open(model, with_runtime("c", 2));
    const auto expected = infer(*c, inputs);
    ASSERT_EQ(expected.size(), actual.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      EXPECT_EQ(actual[i].name, expected[i].name);
      EXPECT_LT(max_abs_difference(actual[i], expected[i]), 1e-4) << actual[i].name;
    }
  }
}

// Threads reach LiteRT's CPU accelerator: the XNNPACK thread pool the compiled model builds has
// that many threads (the calling thread and N - 1 workers), and the setting is the count observed.
TEST_F(TfliteBackendTest, LiteRtRuntimeAppliesAndRecordsItsThreads) {
  const auto tasks = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator{});
  };
  if (!open_litert(tflite(), kTinyTflite, 1)) GTEST_SKIP() << "this build found no ai-edge-litert";
  const auto before_one = tasks();
  auto one = open_litert(tflite(), kTinyTflite, 1);
  const auto with_one = tasks() - before_one;
  auto four = open_litert(tflite(), kTinyTflite, 4);
  EXPECT_EQ(tasks() - before_one - with_one, 3) << "worker threads added by a 4-thread compiled model";
  EXPECT_EQ(setting(*four, "runtime").effective, "litert");
  EXPECT_NE(setting(*four, "runtime_api").effective.find("ai-edge-litert 2.3.0's libLiteRt.so"), std::string::npos);
  EXPECT_EQ(four->library_version(), "ai-edge-litert 2.3.0");
  const auto threads = setting(*four, "intra_op_threads");
  EXPECT_EQ(threads.requested, "4");
  EXPECT_EQ(threads.effective, "4");
  EXPECT_EQ(threads.state, SettingState::kVerified) << threads.note;
  EXPECT_EQ(setting(*one, "intra_op_threads").effective, "1");
  EXPECT_EQ(setting(*one, "intra_op_threads").state, SettingState::kVerified);
  try {
    auto options = with_runtime("litert");
    options.extras["xnnpack"] = "off";
    tflite().open(kTinyTflite, options);
    FAIL() << "runtime=litert accepted xnnpack=off";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runtime=litert cannot take xnnpack=off"), std::string::npos) << e.what();
  }
}

#ifdef INFERMARK_LITERT_LIBRARY
// The declarations match ai-edge-litert 2.3.0 only: its library is refused when another version is
// expected, and a library outside an ai-edge-litert package is refused too.
TEST_F(TfliteBackendTest, TheLiteRtLibraryIsRefusedWhenItBelongsToAnotherVersion) {
  EXPECT_EQ(LiteRtCApi::open(INFERMARK_LITERT_LIBRARY).version, "2.3.0");
  try {
    LiteRtCApi::open(INFERMARK_LITERT_LIBRARY, "2.2.0");
    FAIL() << "accepted ai-edge-litert 2.3.0 where 2.2.0 was expected";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("belongs to ai-edge-litert 2.3.0"), std::string::npos) << message;
    EXPECT_NE(message.find("match ai-edge-litert 2.2.0 only"), std::string::npos) << message;
  }
  EXPECT_THROW(LiteRtCApi::open("/nonexistent/ai_edge_litert/libLiteRt.so"), Error);
}
#endif

}  // namespace
}  // namespace infermark

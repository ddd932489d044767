// Real frameworks on small models the repository exports itself (scripts/setup -> models/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "core/npy.hpp"
#include "harness/measure_cell.hpp"
#include "integration/loaded_backends.hpp"
#include "report/comparison_table.hpp"
#include "stats/output_agreement.hpp"

namespace infermark {
namespace {

const std::filesystem::path kModels = INFERMARK_MODELS_DIR;

using test_support::backend;
using test_support::registry;

// The debug (sanitizer) preset builds without OpenVINO (see CMakePresets.json); tests of a
// backend that is not built are skipped, and say so.
#define SKIP_UNLESS_BUILT(name) \
  if (!registry().is_available(name)) GTEST_SKIP() << (name) << " is not built in this configuration"

std::vector<Tensor> run_once(const std::string& name, const std::filesystem::path& model, const InputRequest& request,
                             SessionOptions options = {}) {
  auto session = backend(name).open(model, options);
  session->set_inputs(generate_inputs(session->input_specs(), request), 1);
  session->run(0);
  return session->outputs();
}

// Same model, same inputs: two frameworks must compute the same function.
void expect_same_outputs(const std::string& reference, const std::string& other) {
  SKIP_UNLESS_BUILT(reference);
  SKIP_UNLESS_BUILT(other);
  InputRequest request;
  request.batch = 4;
  const auto expected = run_once(reference, kModels / "tiny_cnn.onnx", request);
  const auto actual = run_once(other, kModels / "tiny_cnn.onnx", request);
  ASSERT_EQ(expected.at(0).shape, actual.at(0).shape);
  double max_abs = 0;
  for (std::size_t i = 0; i < expected[0].element_count(); ++i)
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(expected[0].as<float>()[i] - actual[0].as<float>()[i])));
  EXPECT_LT(max_abs, 1e-3) << other << " against " << reference;
}

// The declared backends (src/backends/*/backend.cmake) that read one of `formats`, in preference
// order: a new framework's folder joins these tests by declaring the format, with no edit here.
std::vector<std::string> declared_readers(std::initializer_list<std::string_view> formats) {
  std::vector<std::string> names;
  for (const auto& b : declared_backends().backends)
    if (std::any_of(formats.begin(), formats.end(), [&](std::string_view f) { return declared_backends().reads(b.name, f); }))
      names.emplace_back(b.name);
  return names;
}

std::string backend_param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// The reference the other ONNX readers are checked against (run's default --reference).
const std::string kReference = "onnxruntime";

class RealBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { SKIP_UNLESS_BUILT(GetParam()); }
};

// The intra-op count a backend reports is verified (read back from the framework, or counted in
// the process), not the request echoed. Asking for 1 and then 2 threads cannot both match a
// framework that ignored the request: its own default is one number.
void expect_threads_verified(const std::string& name, const std::filesystem::path& model) {
  std::vector<int> counts{1};
  if (std::thread::hardware_concurrency() >= 2) counts.push_back(2);  // no framework caps 2 on 2 cores
  for (const int threads : counts) {
    SessionOptions options;
    options.intra_op_threads = threads;
    auto session = backend(name).open(model, options);
    session->set_inputs(generate_inputs(session->input_specs(), {}), 1);
    const auto settings = session->effective_settings();
    const auto s = std::find_if(settings.begin(), settings.end(), [](const auto& e) { return e.key == "intra_op_threads"; });
    ASSERT_NE(s, settings.end()) << name;
    EXPECT_EQ(s->requested, std::to_string(threads));
    EXPECT_EQ(s->state, SettingState::kVerified) << name << " asked for " << threads << ": " << s->note;
    EXPECT_EQ(s->effective, std::to_string(threads)) << name << ": " << s->note;
  }
}

// Outputs of a converted model against ONNX Runtime's on its ONNX original: same shape, within 1e-3.
void expect_matches_onnxruntime(const std::vector<Tensor>& reference, const std::vector<Tensor>& outputs) {
  ASSERT_EQ(outputs.at(0).shape, reference.at(0).shape);
  const auto agreement = stats::compare_outputs(reference, outputs).at(0);
  ASSERT_TRUE(agreement.comparable) << agreement.note;
  EXPECT_LT(agreement.max_abs_error, 1e-3);
}

// The precision setting a backend reports for `model` opened at `requested`.
EffectiveSetting precision_setting(const std::string& name, const std::filesystem::path& model, const std::string& requested) {
  SessionOptions options;
  options.precision = requested;
  const auto settings = backend(name).open(model, options)->effective_settings();
  return *std::find_if(settings.begin(), settings.end(), [](const auto& s) { return s.key == "precision"; });
}

}  // namespace

TEST_P(RealBackend, ReportsItsRealVersion) {
  const auto info = backend(GetParam()).info();
  EXPECT_EQ(info.name, GetParam());
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(info.version.at(0)))) << info.version;
  EXPECT_NE(info.version.find('.'), std::string::npos) << info.version;
}

TEST_P(RealBackend, ReadsDeclaredInputSpecs) {
  auto session = backend(GetParam()).open(kModels / "tiny_cnn.onnx", {});
  ASSERT_EQ(session->input_specs().size(), 1u);
  const auto& in = session->input_specs()[0];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.dtype, DType::kFloat32);
  EXPECT_EQ(in.shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
  ASSERT_EQ(session->output_specs().size(), 1u);
  EXPECT_EQ(session->output_specs()[0].name, "logits");
}

TEST_P(RealBackend, RunsBatchesAndGivesFiniteOutputs) {
  InputRequest request;
  request.batch = 3;
  const auto outputs = run_once(GetParam(), kModels / "tiny_cnn.onnx", request);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape, (std::vector<std::int64_t>{3, 10}));
  for (std::size_t i = 0; i < outputs[0].element_count(); ++i) EXPECT_TRUE(std::isfinite(outputs[0].as<float>()[i]));
}

TEST_P(RealBackend, DynamicHeightAndWidthRunAtTheRequestedShape) {
  InputRequest request;
  request.shape_overrides["input"] = {2, 3, 40, 24};
  const auto outputs = run_once(GetParam(), kModels / "tiny_cnn_dynamic_hw.onnx", request);
  EXPECT_EQ(outputs.at(0).shape, (std::vector<std::int64_t>{2, 10}));
}

TEST_P(RealBackend, AppliesAndReportsThreads) { expect_threads_verified(GetParam(), kModels / "tiny_cnn.onnx"); }

TEST_P(RealBackend, RejectsAFileThatIsNotAModelNamingIt) {
  const auto path = std::filesystem::temp_directory_path() / ("not_a_model_" + GetParam() + ".onnx");
  std::ofstream(path) << "this is not an ONNX protobuf";
  try {
    backend(GetParam()).open(path, {});
    FAIL() << "opened a text file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST_P(RealBackend, RejectsUnknownFrameworkOptions) {
  SessionOptions options;
  options.extras["no_such_option"] = "1";
  EXPECT_THROW(backend(GetParam()).open(kModels / "tiny_cnn.onnx", options), Error);
}

TEST_P(RealBackend, MeasureCellProducesACompleteResult) {
  result::CellRequest request;
  request.backend = GetParam();
  request.model = kModels / "tiny_cnn.onnx";
  request.options.intra_op_threads = 1;
  request.scenario.warmup_queries = 2;
  request.scenario.max_queries = 30;
  std::vector<std::string> stages;
  const auto result = harness::measure_cell(registry(), request, nullptr, [&](const std::string& s) { stages.push_back(s); });
  ASSERT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
  ASSERT_TRUE(result.latency_ms.has_value());
  EXPECT_EQ(result.latency_ms->count, 30u);
  EXPECT_EQ(result.samples_ms.size(), 30u);
  EXPECT_GT(result.throughput.inferences_per_s, 0.0);
  EXPECT_GT(result.memory.peak_rss_mb, 0.0);
  EXPECT_EQ(result.scenario.inputs.at(0).shape, (std::vector<std::int64_t>{1, 3, 32, 32}));
  EXPECT_EQ(report::effective_setting(result, "intra_op_threads"), "1");
  EXPECT_EQ(stages.back(), "running");
}

// Same model, same inputs: every other ONNX reader computes what the reference does.
TEST_P(RealBackend, AgreesWithTheReference) {
  if (GetParam() == kReference) GTEST_SKIP() << GetParam() << " is the reference";
  expect_same_outputs(kReference, GetParam());
}

INSTANTIATE_TEST_SUITE_P(OnnxFamily, RealBackend, ::testing::ValuesIn(declared_readers({"onnx"})), backend_param_name);

// What each built plugin says about itself is its folder's declaration.
TEST(DeclaredBackends, EveryBuiltPluginReportsItsDeclaration) {
  for (const auto& declared : declared_backends().backends) {
    const std::string name(declared.name);
    if (!registry().is_available(name)) continue;
    const auto info = backend(name).info();
    EXPECT_EQ(info.name, declared.name);
    EXPECT_EQ(info.framework, declared.framework) << name;
    EXPECT_EQ(info.formats, std::vector<std::string>(declared.formats.begin(), declared.formats.end())) << name;
  }
}

TEST(MeasureCell, AFailureIsRecordedNotThrown) {
  result::CellRequest request;
  request.backend = "onnxruntime";
  request.model = kModels / "tiny_cnn_dynamic_hw.onnx";
  const auto result = harness::measure_cell(registry(), request);
  EXPECT_EQ(result.status, infermark::result::CellStatus::kFailed);
  EXPECT_NE(result.error.find("--shape input="), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("while generating inputs"), std::string::npos) << result.error;
  EXPECT_FALSE(result.latency_ms.has_value());
  EXPECT_FALSE(result.model.inputs.empty());  // what was learned before the failure is kept
}

}  // namespace infermark

namespace infermark {

// An FP16 model takes and gives FP16 tensors and stays close to its FP32 original.
TEST(ReducedPrecision, Fp16ModelRunsAndTracksFp32) {
  SKIP_UNLESS_BUILT("onnxruntime");
  InputRequest request;
  request.batch = 4;
  const auto fp32 = run_once("onnxruntime", kModels / "tiny_cnn.onnx", request);
  for (const std::string name : {"onnxruntime", "openvino"}) {
    if (!registry().is_available(name)) continue;
    const auto fp16 = run_once(name, kModels / "tiny_cnn_fp16.onnx", request);
    EXPECT_EQ(fp16.at(0).dtype, DType::kFloat16) << name;
    // Inputs are drawn in FP16 here, so they differ slightly from the FP32 run's.
    EXPECT_GT(stats::compare_outputs(fp32, fp16).at(0).cosine_similarity, 0.99) << name;
  }
}

// An INT8 (QDQ) model runs as stored, and stays close to its FP32 original on the same inputs.
TEST(ReducedPrecision, Int8QdqModelRunsAndTracksFp32) {
  InputRequest request;
  request.batch = 8;
  SKIP_UNLESS_BUILT("onnxruntime");
  const auto fp32 = run_once("onnxruntime", kModels / "tiny_cnn.onnx", request);
  for (const std::string name : {"onnxruntime", "openvino"}) {
    if (!registry().is_available(name)) continue;
    const auto int8 = run_once(name, kModels / "tiny_cnn_int8.onnx", request);
    const auto agreement = stats::compare_outputs(fp32, int8).at(0);
    ASSERT_TRUE(agreement.comparable) << name << ": " << agreement.note;
    EXPECT_GT(agreement.cosine_similarity, 0.9) << name;
  }
}

}  // namespace infermark

namespace infermark {

// TorchScript and ONNX exports of the same weights: LibTorch must compute what ONNX Runtime does.
TEST(LibTorch, RunsTorchScriptWithManifestSpecsAndMatchesOnnxRuntime) {
  SKIP_UNLESS_BUILT("libtorch");
  SKIP_UNLESS_BUILT("onnxruntime");
  auto session = backend("libtorch").open(kModels / "tiny_cnn.pt", {});
  ASSERT_EQ(session->input_specs().at(0).shape, (std::vector<std::int64_t>{kDynamicDim, 3, 32, 32}));
  InputRequest request;
  request.batch = 3;
  const auto torch_out = run_once("libtorch", kModels / "tiny_cnn.pt", request);
  const auto ort_out = run_once("onnxruntime", kModels / "tiny_cnn.onnx", request);
  ASSERT_EQ(torch_out.at(0).shape, (std::vector<std::int64_t>{3, 10}));
  const auto agreement = stats::compare_outputs(ort_out, torch_out).at(0);
  ASSERT_TRUE(agreement.comparable) << agreement.note;
  EXPECT_LT(agreement.max_abs_error, 1e-4);
}

// An archive a newer PyTorch wrote (format version 99): the error names the file, the cause and the remedy.
TEST(LibTorch, AppliesAndReportsThreads) {
  SKIP_UNLESS_BUILT("libtorch");
  expect_threads_verified("libtorch", kModels / "tiny_cnn.pt");
}

TEST(LibTorch, AnArchiveFromANewerPyTorchIsAClearError) {
  SKIP_UNLESS_BUILT("libtorch");
  const auto file = kModels / "tiny_cnn_future_version.pt";
  try {
    backend("libtorch").open(file, {});
    FAIL() << "a format-version-99 archive loaded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot load " + file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("format version 99 was written by a newer PyTorch"), std::string::npos) << message;
    EXPECT_EQ(message.find("enforce fail"), std::string::npos) << message;
  }
}

TEST(LibTorch, ATorchScriptFileWithoutManifestIsAClearError) {
  SKIP_UNLESS_BUILT("libtorch");
  const auto lonely = std::filesystem::temp_directory_path() / "infermark_lonely_model.pt";
  std::filesystem::copy_file(kModels / "tiny_cnn.pt", lonely, std::filesystem::copy_options::overwrite_existing);
  try {
    backend("libtorch").open(lonely, {});
    FAIL() << "opened without input specs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("infermark_lonely_model.json"), std::string::npos) << e.what();
  }
  std::filesystem::remove(lonely);
}

// silero-vad (scripts/setup: `zoo build silero-vad` and its speech input set): forward(input,
// state, sr: int) takes the sample rate as a TorchScript int, which the manifest declares as a
// rank-0 int64 input; LibTorch passes its value and matches ONNX Runtime on the published ONNX.
std::vector<Tensor> speech_chunks() {
  const auto set = kModels / "inputs" / "silero_vad_speech";
  return {read_npy(set / "input.npy", "input"), read_npy(set / "state.npy", "state"), read_npy(set / "sr.npy", "sr")};
}

std::vector<Tensor> run_bound(const std::string& name, const std::filesystem::path& model, const std::vector<Tensor>& inputs) {
  auto session = backend(name).open(model, {});
  session->set_inputs(inputs, 1);
  session->run(0);
  return session->outputs();
}

TEST(LibTorch, PassesARankZeroInputAsTheScalarArgumentForwardDeclares) {
  SKIP_UNLESS_BUILT("libtorch");
  SKIP_UNLESS_BUILT("onnxruntime");
  ASSERT_TRUE(std::filesystem::exists(kModels / "silero_vad.pt")) << "run scripts/setup (it builds silero-vad)";
  const auto inputs = speech_chunks();
  ASSERT_TRUE(inputs[2].shape.empty());  // sr: a rank-0 int64 array
  const auto torch_out = run_bound("libtorch", kModels / "silero_vad.pt", inputs);
  const auto ort_out = run_bound("onnxruntime", kModels / "silero_vad.onnx", inputs);
  ASSERT_EQ(torch_out.size(), 2u);  // speech probability and next state
  ASSERT_EQ(torch_out[0].shape, (std::vector<std::int64_t>{inputs[0].shape[0], 1}));
  for (std::size_t i = 0; i < 2; ++i) {
    const auto agreement = stats::compare_outputs(ort_out, torch_out).at(i);
    ASSERT_TRUE(agreement.comparable) << agreement.note;
    EXPECT_LT(agreement.max_abs_error, 1e-4) << torch_out[i].name;
  }
}

TEST(LibTorch, AScalarArgumentFedAnotherDtypeIsAClearError) {
  SKIP_UNLESS_BUILT("libtorch");
  ASSERT_TRUE(std::filesystem::exists(kModels / "silero_vad.pt")) << "run scripts/setup (it builds silero-vad)";
  auto inputs = speech_chunks();
  inputs[2] = Tensor{"sr", DType::kFloat32, {}, std::vector<std::byte>(sizeof(float))};
  auto session = backend("libtorch").open(kModels / "silero_vad.pt", {});
  try {
    session->set_inputs(inputs, 1);
    FAIL() << "a float32 value was passed to forward()'s sr: int";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'sr': forward() takes a TorchScript int there; a float32 input"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace infermark

// Varying shapes (--shape-range) on real frameworks: a session bound to several input sets runs
// each set at its own shape and gives what a session bound to that set alone gives; a measured
// cell records the shapes it fed.
namespace infermark {
namespace {

// The tiny CNN with dynamic height and width, in the format the backend reads (ONNX where it
// reads that, else its format's first declared extension: .pt for TorchScript).
std::filesystem::path model_for(const std::string& name) {
  if (backend_reads(name, "onnx")) return kModels / "tiny_cnn_dynamic_hw.onnx";
  for (const auto& f : declared_backends().formats)
    if (backend_reads(name, std::string(f.name))) return kModels / ("tiny_cnn_dynamic_hw" + std::string(f.extensions.front()));
  return {};
}

InputRequest varying(const std::string& range, int sets) {
  InputRequest request;
  request.varying = {{{"input", parse_shape_range(range, "--shape-range input=" + range)}}, sets};
  return request;
}

const EffectiveSetting* find_setting(const std::vector<EffectiveSetting>& settings, const std::string& key) {
  for (const auto& s : settings)
    if (s.key == key) return &s;
  return nullptr;
}

class VaryingShapes : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { SKIP_UNLESS_BUILT(GetParam()); }
};

TEST_P(VaryingShapes, EachSetRunsAtItsShapeLikeASessionBoundToItAlone) {
  const auto model = model_for(GetParam());
  auto session = backend(GetParam()).open(model, {});
  const auto sets = generate_input_sets(session->input_specs(), varying("1x3x20-44x20-44", 5));
  std::set<std::vector<std::int64_t>> shapes;
  for (const auto& set : sets) shapes.insert(set.at(0).shape);
  ASSERT_GT(shapes.size(), 1u);
  const int slots = std::min(2, session->max_slots());
  session->set_input_sets(sets, slots, false);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    auto alone = backend(GetParam()).open(model, {});
    alone->set_inputs(sets[s], 1);
    alone->run(0);
    const auto expected = alone->outputs();
    for (int slot = slots - 1; slot >= 0; --slot) session->run_set(slot, s);  // slot 0 last: outputs() reads it
    const auto agreement = stats::compare_outputs(expected, session->outputs()).at(0);
    ASSERT_TRUE(agreement.comparable) << GetParam() << " set " << s << ": " << agreement.note;
    EXPECT_LT(agreement.max_abs_error, 1e-3)
        << GetParam() << " set " << s << " " << sets[s][0].shape[2] << "x" << sets[s][0].shape[3];
  }
}

TEST_P(VaryingShapes, BucketedShapesArePreparedOneByOneOnlyWhereTheFrameworkCan) {
  auto session = backend(GetParam()).open(model_for(GetParam()), {});
  const auto sets = generate_input_sets(session->input_specs(), varying("1x3x16-64/16x16-64/16", 8));
  session->set_input_sets(sets, 1, true);
  session->run_set(0, 3);
  EXPECT_EQ(session->outputs().at(0).shape, (std::vector<std::int64_t>{1, 10}));
  const auto settings = session->effective_settings();
  if (GetParam() == "openvino") {
    const auto* mode = find_setting(settings, "shape_mode");
    ASSERT_NE(mode, nullptr);
    EXPECT_NE(mode->effective.find("static compilation per shape"), std::string::npos) << mode->effective;
  } else {
    const auto* preparation = find_setting(settings, "shape_preparation");
    ASSERT_NE(preparation, nullptr);
    EXPECT_FALSE(preparation->applied());  // asked for, not available: the result says so
    EXPECT_FALSE(preparation->note.empty());
  }
}

TEST_P(VaryingShapes, AMeasuredCellRecordsTheShapesItFed) {
  result::CellRequest request;
  request.backend = GetParam();
  request.model = model_for(GetParam());
  request.inputs = varying("1x3x24-40/8x24-40/8", 6);
  request.scenario.max_queries = 30;
  request.scenario.warmup_queries = 2;
  const auto result = harness::measure_cell(registry(), request);
  ASSERT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
  ASSERT_TRUE(result.scenario.parameters.varying_shapes);
  const auto shapes = infermark::result::to_json(*result.scenario.parameters.varying_shapes);  // as the file has it
  EXPECT_EQ(shapes.at("ranges").at("input"), "1x3x24-40/8x24-40/8");
  EXPECT_TRUE(shapes.at("bucketed").get<bool>());
  EXPECT_EQ(shapes.at("input_sets"), 6);
  // One row per distinct shape, with the timed queries that ran it and their latency.
  ASSERT_EQ(shapes.at("sets").size(), shapes.at("distinct_shapes").get<std::size_t>());
  std::uint64_t queries = 0;
  for (const auto& set : shapes.at("sets")) {
    const auto label = set.at("group").get<std::string>();  // "input=1x3xHxW"
    EXPECT_EQ(label.rfind("input=1x3x", 0), 0u) << label;
    const auto h = std::stoi(label.substr(std::string("input=1x3x").size()));
    EXPECT_TRUE(h == 24 || h == 32 || h == 40) << label;
    EXPECT_EQ(set.at("input_elements").get<double>(), 3.0 * h * std::stoi(label.substr(label.rfind('x') + 1)));
    queries += set.at("queries").get<std::uint64_t>();
    if (set.at("queries").get<std::uint64_t>() > 0) {
      EXPECT_GT(set.at("p99").get<double>(), 0.0) << set.dump();
    }
  }
  EXPECT_EQ(queries, 30u);  // every timed query, counted against the shape it ran
  EXPECT_GT(shapes.at("mean_input_elements").get<double>(), 3.0 * 24 * 24 - 1);
  ASSERT_FALSE(result.phases.empty());
  ASSERT_TRUE(result.phases[0].latency_by_group_ms);
  EXPECT_EQ(result.phases[0].latency_by_group_ms->size(), shapes.at("sets").size());
  EXPECT_GE(shapes.at("distinct_shapes").get<int>(), 2);
}

// tiny_cnn_dynamic_hw exists as ONNX and TorchScript (scripts/setup).
INSTANTIATE_TEST_SUITE_P(DynamicHeightWidth, VaryingShapes, ::testing::ValuesIn(declared_readers({"onnx", "torchscript"})),
                         backend_param_name);

}  // namespace
}  // namespace infermark

namespace infermark {

// ncnn (built from PyPI's sdist by scripts/setup) on pnnx's conversions: tensor names and shapes
// from the zoo's manifest, batch 1, the same function as ONNX Runtime on the ONNX original.
TEST(Ncnn, RunsPnnxConversionsWithManifestSpecsAndMatchesOnnxRuntime) {
  SKIP_UNLESS_BUILT("ncnn");
  SKIP_UNLESS_BUILT("onnxruntime");
  for (const auto* stem : {"tiny_cnn", "efficientnet_lite0"}) {
    SCOPED_TRACE(stem);
    const auto param = kModels / (std::string(stem) + ".ncnn.param");
    if (!std::filesystem::exists(param)) GTEST_FAIL() << param << " missing: scripts/setup converts it";
    auto session = backend("ncnn").open(param, {});
    ASSERT_EQ(session->input_specs().at(0).name, "input");
    ASSERT_EQ(session->output_specs().at(0).name, "logits");
    expect_matches_onnxruntime(run_once("onnxruntime", kModels / (std::string(stem) + ".onnx"), {}), run_once("ncnn", param, {}));
  }
}

TEST(Ncnn, AppliesAndReportsThreads) {
  SKIP_UNLESS_BUILT("ncnn");
  expect_threads_verified("ncnn", kModels / "tiny_cnn.ncnn.param");
}

// fp32 turns ncnn's fp16 storage off (its default on CPUs with F16C); fp16 turns it on and says
// what the CPU computes in; int8 of an fp32 file is said not applied, with the reason.
TEST(Ncnn, ReportsThePrecisionItComputesIn) {
  SKIP_UNLESS_BUILT("ncnn");
  const auto precision_of = [](const std::string& requested) {
    return precision_setting("ncnn", kModels / "tiny_cnn.ncnn.param", requested);
  };
  const auto fp32 = precision_of("fp32");
  EXPECT_EQ(fp32.state, SettingState::kVerified);
  EXPECT_EQ(fp32.effective, "fp32");
  const auto fp16 = precision_of("fp16");
  EXPECT_NE(fp16.state, SettingState::kVerified) << "fp16 on a CPU cannot be read back";
  const auto int8 = precision_of("int8");
  EXPECT_EQ(int8.state, SettingState::kNotApplied);
  EXPECT_NE(int8.note.find("ncnn2int8"), std::string::npos) << int8.note;
}

// No batch axis in ncnn: a batch of 3 is three extractions in a row, said in the settings, and
// gives what ONNX Runtime gives at batch 3. A model whose weights or manifest are missing is
// refused naming the file.
TEST(Ncnn, BatchesRunSampleBySampleAndMissingFilesAreClearErrors) {
  SKIP_UNLESS_BUILT("ncnn");
  SKIP_UNLESS_BUILT("onnxruntime");
  InputRequest request;
  request.batch = 3;
  auto session = backend("ncnn").open(kModels / "tiny_cnn.ncnn.param", {});
  session->set_inputs(generate_inputs(session->input_specs(), request), 2);
  session->run(1);
  session->run(0);
  const auto ncnn_out = session->outputs();
  const auto ort_out = run_once("onnxruntime", kModels / "tiny_cnn.onnx", request);
  ASSERT_EQ(ncnn_out.at(0).shape, (std::vector<std::int64_t>{3, 10}));
  EXPECT_LT(stats::compare_outputs(ort_out, ncnn_out).at(0).max_abs_error, 1e-4);
  const auto settings = session->effective_settings();
  const auto batch = std::find_if(settings.begin(), settings.end(), [](const auto& s) { return s.key == "batch_execution"; });
  ASSERT_NE(batch, settings.end());
  EXPECT_EQ(batch->effective, "3 extractions in a row");

  const auto folder = std::filesystem::temp_directory_path() / "infermark_ncnn_test";
  std::filesystem::create_directories(folder);
  const auto lonely = folder / "lonely.ncnn.param";
  std::filesystem::copy_file(kModels / "tiny_cnn.ncnn.param", lonely, std::filesystem::copy_options::overwrite_existing);
  try {
    backend("ncnn").open(lonely, {});
    FAIL() << "opened without its weights";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lonely.ncnn.bin are missing"), std::string::npos) << e.what();
  }
  std::filesystem::copy_file(kModels / "tiny_cnn.ncnn.bin", folder / "lonely.ncnn.bin",
                             std::filesystem::copy_options::overwrite_existing);
  try {
    backend("ncnn").open(lonely, {});
    FAIL() << "opened without a manifest";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lonely.json"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(folder);
}

}  // namespace infermark

namespace infermark {

// MNN (built from mnn-sys's vendored source by scripts/setup) on its converter's files: the ONNX
// names kept, any batch (the session resized), the same function as ONNX Runtime on every run.
TEST(Mnn, RunsConvertedModelsAtAnyBatchAndMatchesOnnxRuntime) {
  SKIP_UNLESS_BUILT("mnn");
  SKIP_UNLESS_BUILT("onnxruntime");
  for (const auto* stem : {"tiny_cnn", "efficientnet_lite0"})
    for (const long long batch : {1LL, 3LL}) {
      SCOPED_TRACE(std::string(stem) + " batch " + std::to_string(batch));
      const auto model = kModels / (std::string(stem) + ".mnn");
      if (!std::filesystem::exists(model)) GTEST_FAIL() << model << " missing: scripts/setup converts it";
      InputRequest request;
      request.batch = batch;
      // Three runs on one binding, as the harness runs: MNN reuses its input's memory during an
      // inference, so the bound input must be copied in again every run.
      auto session = backend("mnn").open(model, {});
      session->set_inputs(generate_inputs(session->input_specs(), request), 1);
      for (int run = 0; run < 3; ++run) session->run(0);
      const auto mnn_out = session->outputs();
      const auto ort_out = run_once("onnxruntime", kModels / (std::string(stem) + ".onnx"), request);
      ASSERT_EQ(mnn_out.at(0).name, "logits");
      expect_matches_onnxruntime(ort_out, mnn_out);
    }
}

TEST(Mnn, AppliesAndReportsThreads) {
  SKIP_UNLESS_BUILT("mnn");
  expect_threads_verified("mnn", kModels / "tiny_cnn.mnn");
}

TEST(Mnn, ReportsThePrecisionItComputesInAndRefusesWhatIsNotAModel) {
  SKIP_UNLESS_BUILT("mnn");
  const auto precision_of = [](const std::string& requested) {
    return precision_setting("mnn", kModels / "tiny_cnn.mnn", requested);
  };
  EXPECT_EQ(precision_of("fp32").state, SettingState::kVerified);
  EXPECT_EQ(precision_of("int8").state, SettingState::kNotApplied);
  EXPECT_NE(precision_of("fp16").state, SettingState::kVerified);
  const auto garbage = std::filesystem::temp_directory_path() / "infermark_not_a_model.mnn";
  std::ofstream(garbage) << "not an MNN model at all";
  try {
    backend("mnn").open(garbage, {});
    FAIL() << "opened a text file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load " + garbage.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(garbage);
}

}  // namespace infermark

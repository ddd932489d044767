// silero-vad with its published weights (scripts/setup: `zoo build silero-vad` and the speech input
// set from Debian alsa-utils' spoken test sounds): the published ONNX on ONNX Runtime, its
// OpenVINO IR on OpenVINO and the published .jit's networks on LibTorch (forward's `sr: int` passed
// as a Python int) give each 512-sample chunk the same speech probability, and the probabilities
// make sense: loud speech is speech, the pink noise between the phrases is not.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "cli_test_support.hpp"
#include "core/npy.hpp"

namespace infermark::testing {
namespace {

const fs::path kSpeech = kModels / "inputs" / "silero_vad_speech";

class VoiceActivityCli : public CliTest {};

// Speech probability per chunk of each cell that ran, by the model file's extension.
std::map<std::string, std::vector<float>> probabilities(const fs::path& results) {
  std::map<std::string, std::vector<float>> by_file;
  for (const auto& run : fs::directory_iterator(results))
    for (const auto& file : fs::directory_iterator(run.path())) {
      if (file.path().extension() != ".json") continue;
      const auto result = nlohmann::json::parse(slurp(file.path()));
      if (result["status"] != "ok") continue;
      const auto outputs = fs::path(file.path()).replace_extension(".outputs") / "output.npy";
      const auto tensor = read_npy(outputs, "output");
      by_file[fs::path(result["model"]["path"].get<std::string>()).extension().string()] =
          std::vector<float>(tensor.as<float>(), tensor.as<float>() + tensor.element_count());
    }
  return by_file;
}

TEST_F(VoiceActivityCli, OnnxOpenVinoAndTorchScriptGiveTheSameSensibleSpeechProbabilities) {
  prepare({"onnxruntime", "openvino", "libtorch"}, "infermark_vad_");
  for (const auto* file : {"silero_vad.onnx", "silero_vad.xml", "silero_vad.pt"})
    ASSERT_TRUE(fs::exists(kModels / file)) << "run scripts/setup (it builds silero-vad): " << file;
  ASSERT_TRUE(fs::exists(kSpeech / "input.npy")) << "run scripts/setup (it writes the speech input set)";
  const auto results = dir_ / "results";
  const auto r = infermark("run " + (kModels / "silero_vad.onnx").string() + " " + (kModels / "silero_vad.xml").string() + " " +
                           (kModels / "silero_vad.pt").string() +
                           " -b onnxruntime,openvino,libtorch --threads 1 --warmup 0 --runs 1 --out " + results.string() +
                           " --input input=" + (kSpeech / "input.npy").string() +
                           " --input state=" + (kSpeech / "state.npy").string() + " --input sr=" + (kSpeech / "sr.npy").string());
  // OpenVINO's ONNX front end cannot convert the published silero_vad.onnx (nested If): that one
  // cell fails, so the run exits 2; OpenVINO runs the IR instead.
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.out << r.err;

  const auto chunks = nlohmann::json::parse(slurp(kSpeech / "chunks.json"))["chunks"];
  const auto by_file = probabilities(results);
  ASSERT_EQ(by_file.size(), 3u) << r.out << r.err;  // .onnx (ONNX Runtime), .xml (OpenVINO), .pt (LibTorch)
  const auto& reference = by_file.at(".onnx");
  ASSERT_EQ(reference.size(), chunks.size());
  for (const auto& [extension, values] : by_file) {
    ASSERT_EQ(values.size(), reference.size()) << extension;
    float worst = 0;
    for (std::size_t i = 0; i < values.size(); ++i) worst = std::max(worst, std::abs(values[i] - reference[i]));
    EXPECT_LT(worst, 1e-4) << extension << " against ONNX Runtime";
  }
  // The streamed probability the input set recorded (Python ONNX Runtime and the published .jit).
  int loud = 0, noise = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_NEAR(reference[i], chunks[i]["probability_onnx"].get<float>(), 1e-4) << "chunk " << i;
    EXPECT_NEAR(reference[i], chunks[i]["probability_jit"].get<float>(), 1e-4) << "chunk " << i;
    if (chunks[i]["rms_dbfs"].get<double>() > -25) {  // loud parts of the spoken words
      EXPECT_GT(reference[i], 0.9) << "chunk " << i;
      ++loud;
    }
    // Pink noise, after the first 64 ms in which the state still remembers the speech before it.
    if (chunks[i]["recording"] == "Noise.wav" && i >= 2 && chunks[i - 2]["recording"] == "Noise.wav") {
      EXPECT_LT(reference[i], 0.5) << "chunk " << i;
      ++noise;
    }
  }
  EXPECT_GT(loud, 20);
  EXPECT_GT(noise, 30);
}

}  // namespace
}  // namespace infermark::testing

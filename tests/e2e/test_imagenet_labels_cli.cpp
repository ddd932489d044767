// EfficientNet-Lite0 with its pretrained ImageNet weights (scripts/setup: `zoo build
// efficientnet-lite0` and the labelled opencv-doc photos) on the labelled set: the result carries
// accuracy against the labels, and the real model finds most labels among its top five.
#include <map>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace infermark::testing {
namespace {

const fs::path kLabelledSet = kModels / "inputs" / "imagenet_labelled.npy";

class ImagenetLabelsCli : public CliTest {};

TEST_F(ImagenetLabelsCli, PretrainedModelFindsMostLabelsInItsTopFive) {
  prepare({"onnxruntime"}, "infermark_imagenet_");
  ASSERT_TRUE(fs::exists(kModels / "efficientnet_lite0.onnx")) << "run scripts/setup (it builds efficientnet-lite0)";
  ASSERT_TRUE(fs::exists(kLabelledSet)) << "run scripts/setup (it writes the labelled ImageNet photos)";
  const auto results = dir_ / "results";
  const auto r = infermark("run " + (kModels / "efficientnet_lite0.onnx").string() +
                           " -b onnxruntime --threads 2 --warmup 0 --runs 1 --out " + results.string() +
                           " --input input=" + kLabelledSet.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("vs labels"), std::string::npos) << r.out;
  nlohmann::json result;
  for (const auto& run : fs::directory_iterator(results))
    for (const auto& file : fs::directory_iterator(run.path()))
      if (file.path().extension() == ".json" && file.path().filename().string().starts_with("efficientnet_lite0.onnxruntime"))
        result = nlohmann::json::parse(slurp(file.path()));
  ASSERT_TRUE(result.contains("label_accuracy")) << result.dump(1);
  const auto& accuracy = result["label_accuracy"];
  const auto samples = accuracy["samples"].get<std::int64_t>();
  EXPECT_GE(samples, 5);
  EXPECT_EQ(accuracy["output"], "logits");
  // Most photos' class among the five highest scores (a random-weight network would find ~0.5%).
  EXPECT_GE(accuracy["top5"].get<double>() * static_cast<double>(samples), static_cast<double>(samples - 1));
  EXPECT_GE(accuracy["top1"].get<double>(), 0.5);
}

// OpenCV DNN 4.6 loads the opset-10 export (`zoo build efficientnet-lite0-opencv`), and its logits
// on the labelled photos match ONNX Runtime's: same top-1 for every photo, same label accuracy. It
// also loads and runs that export's INT8 (QLinearConv only).
TEST_F(ImagenetLabelsCli, OpenCvRunsTheOpset10ExportAsOnnxRuntimeDoes) {
  prepare({"onnxruntime", "opencv"}, "infermark_imagenet_");
  const auto model = kModels / "efficientnet_lite0_opencv.onnx";
  ASSERT_TRUE(fs::exists(model)) << "run scripts/setup (it builds efficientnet-lite0-opencv)";
  ASSERT_TRUE(fs::exists(kLabelledSet)) << "run scripts/setup (it writes the labelled ImageNet photos)";
  const auto results = dir_ / "results";
  const auto int8 = kModels / "efficientnet_lite0_opencv_int8.onnx";
  ASSERT_TRUE(fs::exists(int8)) << "run scripts/setup (it builds efficientnet-lite0-opencv)";
  const auto r =
      infermark("run " + model.string() + " " + int8.string() + " -b onnxruntime,opencv --threads 2 --warmup 0 --runs 1 --out " +
                results.string() + " --input input=" + kLabelledSet.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<std::string, nlohmann::json> by_backend, int8_by_backend;
  for (const auto& run : fs::directory_iterator(results))
    for (const auto& file : fs::directory_iterator(run.path()))
      if (file.path().extension() == ".json" && file.path().filename().string().starts_with("efficientnet_lite0_opencv")) {
        const auto result = nlohmann::json::parse(slurp(file.path()));
        (result["model"]["name"] == "efficientnet_lite0_opencv_int8" ? int8_by_backend
                                                                     : by_backend)[result["backend"]["name"].get<std::string>()] =
            result;
      }
  ASSERT_TRUE(by_backend.contains("opencv") && by_backend.contains("onnxruntime")) << r.out;
  const auto& opencv = by_backend["opencv"];
  EXPECT_EQ(opencv["status"], "ok") << opencv.dump(1);
  const auto& logits = opencv["cross_check"]["outputs"][0];
  EXPECT_EQ(opencv["cross_check"]["reference_backend"], "onnxruntime");
  EXPECT_EQ(logits["top1_agreement"].get<double>(), 1.0) << logits.dump();
  EXPECT_LT(logits["max_abs_error"].get<double>(), 1e-3) << logits.dump();
  EXPECT_EQ(opencv["label_accuracy"]["top1"], by_backend["onnxruntime"]["label_accuracy"]["top1"]);
  EXPECT_GE(opencv["label_accuracy"]["top1"].get<double>(), 0.5);
  ASSERT_TRUE(int8_by_backend.contains("opencv")) << r.out;
  EXPECT_EQ(int8_by_backend["opencv"]["status"], "ok") << int8_by_backend["opencv"].dump(1);

  // The FP16 file OpenCV 4.6 cannot read: the failure says why, plainly.
  const auto fp16 = infermark("run " + (kModels / "efficientnet_lite0_fp16.onnx").string() +
                              " -b opencv --warmup 0 --runs 1 --out " + results.string());
  EXPECT_NE((fp16.out + fp16.err).find("DNN_TARGET_CPU_FP16 does not exist in 4.6"), std::string::npos) << fp16.out << fp16.err;
}

}  // namespace
}  // namespace infermark::testing

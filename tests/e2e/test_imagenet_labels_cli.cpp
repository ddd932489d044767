// EfficientNet-Lite0 with its pretrained ImageNet weights (scripts/setup: `zoo build
// efficientnet-lite0` and the labelled opencv-doc photos) on the labelled set: the result carries
// accuracy against the labels, and the real model finds most labels among its top five.
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

}  // namespace
}  // namespace infermark::testing

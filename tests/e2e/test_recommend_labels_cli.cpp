// recommend --max-accuracy-loss on real result files: EfficientNet-Lite0 FP32 and INT8 (pretrained,
// scripts/setup) on ONNX Runtime fed the labelled opencv-doc photos. The INT8 cell is judged by
// points of top-1 vs labels below its FP32 sibling, the verdict follows that rule, and the
// explanation names the measure and how coarse 7 labels are.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace infermark::testing {
namespace {

class RecommendLabelsCli : public CliTest {};

TEST_F(RecommendLabelsCli, Int8IsJudgedAgainstLabelsRelativeToItsFp32Sibling) {
  prepare({"onnxruntime"}, "infermark_recommend_labels_");
  const auto labelled = kModels / "inputs" / "imagenet_labelled.npy";
  ASSERT_TRUE(fs::exists(kModels / "efficientnet_lite0_int8.onnx")) << "run scripts/setup (it builds efficientnet-lite0)";
  ASSERT_TRUE(fs::exists(labelled)) << "run scripts/setup (it writes the labelled ImageNet photos)";
  const auto results = dir_ / "results";
  const auto run = infermark(
      "run " + (kModels / "efficientnet_lite0.onnx").string() + " " + (kModels / "efficientnet_lite0_int8.onnx").string() +
      " -b onnxruntime --threads 2 --warmup 1 --runs 3 --out " + results.string() + " --input input=" + labelled.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  const auto r = infermark("recommend " + results.string() + " --max-accuracy-loss 10 --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out << r.err;
  const auto rec = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> cells;  // model -> its only cell
  for (const auto& m : rec["models"])
    for (const auto* list : {"ranked", "rejected"})
      for (const auto& cell : m[list]) cells[m["model"].get<std::string>()] = cell;
  ASSERT_EQ(cells.size(), 2u) << r.out;
  const auto& fp32 = cells.at("efficientnet_lite0");
  const auto& int8 = cells.at("efficientnet_lite0_int8");
  EXPECT_EQ(fp32["accuracy_measure"], "top-1 vs labels");
  EXPECT_EQ(fp32["accuracy_loss"], 0.0);
  EXPECT_EQ(int8["accuracy_measure"], "top-1 vs labels");
  EXPECT_EQ(int8["label_samples"], 7);
  const double points = (fp32["label_top1"].get<double>() - int8["label_top1"].get<double>()) * 100.0;
  EXPECT_NEAR(int8["accuracy_loss"].get<double>() * 100.0, std::max(0.0, points), 1e-9);
  EXPECT_EQ(int8["meets_all"].get<bool>(), points <= 10.0) << int8.dump(1);
  EXPECT_NE(int8["accuracy_source"].get<std::string>().find("points below efficientnet_lite0 on onnxruntime"), std::string::npos);

  const auto text = infermark("recommend " + results.string() + " --max-accuracy-loss 10");
  EXPECT_NE(text.out.find("| top-1 vs labels |"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Accuracy loss judged by top-1 vs labels for onnxruntime t2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("One labelled sample is 14.3 points of top-1"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace infermark::testing

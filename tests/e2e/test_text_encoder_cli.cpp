// all-MiniLM-L6-v2 with its real weights (scripts/setup: `zoo build minilm-l6` and the Reuters
// input set), FP32 and the published INT8 run on real text: the INT8 file's token embeddings must
// point the FP32 file's way (cosine > 0.9) yet differ from them (it really is another network).
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "core/npy.hpp"

namespace infermark::testing {
namespace {

const fs::path kReuters = kModels / "inputs" / "reuters_minilm";
constexpr std::int64_t kArticles = 4;

class TextEncoderCli : public CliTest {
 protected:
  // The first kArticles rows of each input of the set, as .npy files in the scratch folder.
  std::string input_flags() {
    std::string flags;
    for (const std::string name : {"input_ids", "attention_mask", "token_type_ids"}) {
      auto tensor = read_npy(kReuters / (name + ".npy"), name);
      EXPECT_GE(tensor.shape.at(0), kArticles);
      tensor.data.resize(tensor.data.size() / static_cast<std::size_t>(tensor.shape[0]) * kArticles);
      tensor.shape[0] = kArticles;
      write_npy(tensor, dir_ / (name + ".npy"));
      flags += " --input " + name + "=" + (dir_ / (name + ".npy")).string();
    }
    return flags;
  }
};

nlohmann::json only_result(const fs::path& results, const std::string& stem) {
  for (const auto& run : fs::directory_iterator(results))
    for (const auto& file : fs::directory_iterator(run.path()))
      if (file.path().extension() == ".json" && file.path().filename().string().starts_with(stem + ".onnxruntime"))
        return nlohmann::json::parse(slurp(file.path()));
  ADD_FAILURE() << "no result of " << stem << " in " << results;
  return {};
}

TEST_F(TextEncoderCli, Int8AgreesWithFp32OnRealTextByCosineButIsNotIdentical) {
  prepare({"onnxruntime"}, "infermark_minilm_");
  ASSERT_TRUE(fs::exists(kModels / "minilm_l6.onnx") && fs::exists(kModels / "minilm_l6_int8.onnx"))
      << "run scripts/setup (it builds minilm-l6)";
  ASSERT_TRUE(fs::exists(kReuters / "input_ids.npy")) << "run scripts/setup (it writes the Reuters input set)";
  const auto results = dir_ / "results";
  const auto r = infermark("run " + (kModels / "minilm_l6.onnx").string() + " " + (kModels / "minilm_l6_int8.onnx").string() +
                           " -b onnxruntime --threads 2 --warmup 0 --runs 1 --out " + results.string() + input_flags());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| cos 0.9"), std::string::npos) << r.out;  // the agreement column of the INT8 row

  const auto fp32 = only_result(results, "minilm_l6");
  EXPECT_TRUE(fp32["cross_check"]["is_reference"].get<bool>());
  const auto int8 = only_result(results, "minilm_l6_int8");
  ASSERT_EQ(int8["scenario"]["inputs"][0]["shape"], nlohmann::json::array({kArticles, 128}));
  const auto& hidden = int8["cross_check"]["outputs"][0];
  EXPECT_EQ(hidden["output"], "last_hidden_state");
  const double mean = hidden["vector_cosine_mean"].get<double>(), least = hidden["vector_cosine_min"].get<double>();
  EXPECT_GT(mean, 0.9);
  EXPECT_LT(mean, 0.9999);  // INT8 really computes something else
  EXPECT_GT(least, 0.5);
  EXPECT_GT(hidden["max_abs_error"].get<double>(), 1e-3);
}

}  // namespace
}  // namespace infermark::testing

// Results folder names: a timestamp and a label that is always one path component.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>

#include "result/results_folder.hpp"

namespace infermark::result {
namespace {

TEST(ResultsFolder, AServedModelNameThatIsAPathOrHubIdStaysOneFolder) {
  const std::time_t started = 0;
  for (const auto* label : {"/work/models:smollm2-135m.gguf", "HuggingFaceTB/SmolLM2-135M", "a b\\c"}) {
    const auto name = results_folder_name(label, started);
    EXPECT_EQ(std::filesystem::path(name).filename().string(), name) << label;
    EXPECT_EQ(name.find_first_of("/\\: "), std::string::npos) << name;
  }
  EXPECT_NE(results_folder_name("resnet50-and-2-more", started).find("-resnet50-and-2-more"), std::string::npos);
  const auto out = std::filesystem::temp_directory_path() / "infermark-results-folder-test";
  std::filesystem::remove_all(out);
  const auto folder = create_results_folder(out, "org/model", started, "--out");
  EXPECT_EQ(folder.parent_path(), out);
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace infermark::result

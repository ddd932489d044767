#include <gtest/gtest.h>

#include <filesystem>

#include "backends/options.hpp"
#include "backends/registry.hpp"
#include "core/error.hpp"

namespace infermark {

TEST(Registry, UnknownBackendListsTheKnownOnes) {
  try {
    BackendRegistry::check_known("tensorflowz");
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown backend 'tensorflowz'"), std::string::npos);
    EXPECT_NE(message.find("onnxruntime"), std::string::npos);
  }
}

TEST(Registry, MissingPluginIsNotBuilt) {
  const auto empty = std::filesystem::temp_directory_path() / "infermark_empty_plugins";
  std::filesystem::create_directories(empty);
  BackendRegistry registry(empty);
  EXPECT_FALSE(registry.is_available("onnxruntime"));
  try {
    registry.load("onnxruntime");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not built"), std::string::npos);
  }
}

TEST(Registry, FormatsAndModelFiles) {
  EXPECT_TRUE(backend_reads("openvino", "onnx"));
  EXPECT_TRUE(backend_reads("openvino", "openvino-ir"));
  EXPECT_FALSE(backend_reads("onnxruntime", "torchscript"));
  EXPECT_FALSE(backend_reads("nope", "onnx"));
  EXPECT_EQ(model_format("a/b/resnet50.onnx"), "onnx");
  EXPECT_EQ(model_format("m.xml"), "openvino-ir");
  EXPECT_EQ(model_format("m.pt"), "torchscript");
  EXPECT_EQ(model_format("m.txt"), "");
}

TEST(BackendOptions, RejectUnknownKeysAndBadValues) {
  const std::vector<OptionDoc> accepted{{"spinning", "on|off", "on", ""}, {"memory_arena", "on|off", "on", ""}};
  EXPECT_NO_THROW(check_option_keys("onnxruntime", {{"spinning", "off"}}, accepted));
  try {
    check_option_keys("onnxruntime", {{"spining", "off"}}, accepted);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--opt spining=off: backend 'onnxruntime' has no option 'spining'"), std::string::npos);
  }
  EXPECT_TRUE(parse_bool_option("x", "k", "on"));
  EXPECT_FALSE(parse_bool_option("x", "k", "0"));
  EXPECT_THROW(parse_bool_option("x", "k", "maybe"), Error);
  EXPECT_EQ(parse_count_option("x", "k", "4"), 4);
  EXPECT_THROW(parse_count_option("x", "k", "-1"), Error);
  EXPECT_THROW(parse_count_option("x", "k", "4a"), Error);
  EXPECT_EQ(option_or({{"a", "1"}}, "b", "dflt"), "dflt");
}

}  // namespace infermark

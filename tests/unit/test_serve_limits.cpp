// `infermark serve`'s connection limits: the server section's timeouts and connection cap as read
// from a model repository file, and the cap derived from the open-file limit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "serve/serve_config.hpp"
#include "serve/serve_main.hpp"

namespace infermark::serve {
namespace {

std::filesystem::path repository_file(const std::string& name, const std::string& server) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << "server: " << server << "\nmodels:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime}]}\n";
  return path;
}

}  // namespace

TEST(ServeLimits, TimeoutsAndTheConnectionCapComeFromTheServerSection) {
  const auto config = load_serve_config(
      repository_file("serve_limits.yaml", "{max_connections: 500, read_timeout_s: 5, idle_timeout_s: 20, write_timeout_s: 7}"));
  EXPECT_EQ(config.max_connections, 500u);
  EXPECT_EQ(config.read_timeout_s, 5);
  EXPECT_EQ(config.idle_timeout_s, 20);
  EXPECT_EQ(config.write_timeout_s, 7);
  const auto defaults = load_serve_config(repository_file("serve_limits_default.yaml", "{http_port: 9000}"));
  EXPECT_EQ(defaults.max_connections, 0u);
  EXPECT_EQ(defaults.read_timeout_s, 30);
  EXPECT_EQ(defaults.idle_timeout_s, 75);
  try {
    load_serve_config(repository_file("serve_limits_bad.yaml", "{idle_timeout_s: 0}"));
    FAIL() << "a zero idle timeout was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("idle_timeout_s must be at least 1"), std::string::npos) << e.what();
  }
}

TEST(ServeLimits, TheConnectionCapLeavesAReserveOfOpenFiles) {
  EXPECT_EQ(connection_cap(100, 20000), 100u);        // as configured
  EXPECT_EQ(connection_cap(0, 20000), 20000u - 256);  // the open-file limit less the reserve
  EXPECT_EQ(connection_cap(0, 300), 150u);            // a small limit: half of it
  EXPECT_GE(raise_open_file_limit(), 1u);
}

}  // namespace infermark::serve

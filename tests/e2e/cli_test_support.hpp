// Shared by the command-line tests: a scratch folder per test and a way to run the infermark
// executable as a user would, capturing its exit code and output.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.hpp"

namespace infermark::testing {

namespace fs = std::filesystem;
inline const fs::path kModels = INFERMARK_MODELS_DIR;

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliTest : public ::testing::Test {
 protected:
  // Skips the test when a backend it needs is not built (the debug preset builds without
  // OpenVINO), then makes an empty scratch folder named after the test.
  void prepare(const std::vector<std::string>& needed_backends, const std::string& prefix) {
    const BackendRegistry registry{INFERMARK_PLUGIN_DIR};
    for (const auto& name : needed_backends)
      if (!registry.is_available(name)) GTEST_SKIP() << name << " is not built in this configuration";
    dir_ = fs::temp_directory_path() / (prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `env` is prepended to the command line (variable assignments or a wrapper such as timeout).
  CommandResult infermark(const std::string& args, const std::string& env = "") {
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const auto command = env + " " + std::string(INFERMARK_EXECUTABLE) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }

  fs::path dir_;
};

}  // namespace infermark::testing

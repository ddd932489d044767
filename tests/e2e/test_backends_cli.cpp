// What the command line says about backends comes from their folders' declarations
// (src/backends/*/backend.cmake): `infermark backends` and `infermark run --help`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_test_support.hpp"

namespace {

using namespace infermark::testing;
using infermark::declared_backends;

class BackendsCli : public CliTest {
 protected:
  void SetUp() override { prepare({}, "infermark_e2e_backends_"); }
};

TEST_F(BackendsCli, ListsEveryDeclaredBackendInOrderAsDeclared) {
  const auto r = infermark("backends --json");
  const auto listing = nlohmann::json::parse(r.out);
  const auto& declared = declared_backends().backends;
  ASSERT_EQ(listing.size(), declared.size()) << r.out;
  const infermark::BackendRegistry registry{INFERMARK_PLUGIN_DIR};
  for (std::size_t i = 0; i < declared.size(); ++i) {
    const auto& entry = listing[i];
    EXPECT_EQ(entry["name"], std::string(declared[i].name));
    EXPECT_EQ(entry["built"].get<bool>(), registry.is_available(std::string(declared[i].name)));
    if (!entry["built"].get<bool>() || !entry["error"].get<std::string>().empty()) continue;
    EXPECT_EQ(entry["framework"], std::string(declared[i].framework));
    EXPECT_EQ(entry["formats"], std::vector<std::string>(declared[i].formats.begin(), declared[i].formats.end()));
  }
}

TEST_F(BackendsCli, RunHelpNamesEveryDeclaredBackendAndExtension) {
  const auto r = infermark("run --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& b : declared_backends().backends) EXPECT_NE(r.out.find(std::string(b.name)), std::string::npos) << b.name;
  for (const auto& f : declared_backends().formats)
    for (const auto& e : f.extensions) EXPECT_NE(r.out.find(std::string(e)), std::string::npos) << e;
}

}  // namespace

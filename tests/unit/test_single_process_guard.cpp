// Commands that run on one process refuse a multi-rank MPI launch, read from the launcher's
// environment (no MPI runtime is started for that).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "scaleout/mpi_world.hpp"
#include "scaleout/single_process_guard.hpp"

namespace infermark {
namespace {

// Sets one launcher variable for the test's length and restores the environment after.
class LauncherEnvironment {
 public:
  LauncherEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~LauncherEnvironment() {
    if (old_.empty())
      unsetenv(name_);
    else
      setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(SingleProcessGuard, OneRankOrNoLauncherRunsAsUsual) {
  EXPECT_NO_THROW(scaleout::refuse_several_ranks("run"));
  const LauncherEnvironment one("OMPI_COMM_WORLD_SIZE", "1");
  EXPECT_EQ(scaleout::launched_ranks(), 1);
  EXPECT_NO_THROW(scaleout::refuse_several_ranks("run"));
}

TEST(SingleProcessGuard, SeveralRanksAreRefusedWithWhatToRunInstead) {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const LauncherEnvironment two(variable, "2");
    EXPECT_EQ(scaleout::launched_ranks(), 2) << variable;
    try {
      scaleout::refuse_several_ranks("serve");
      FAIL() << "serve ran as one of 2 ranks (" << variable << ")";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("`serve` runs on one process"), std::string::npos) << what;
      EXPECT_NE(what.find("one of 2 MPI ranks"), std::string::npos) << what;
      EXPECT_NE(what.find("mpirun -np N infermark sweep"), std::string::npos) << what;
      EXPECT_NE(what.find("mpirun -np N infermark load URL"), std::string::npos) << what;
    }
  }
}

TEST(SingleProcessGuard, GarbageInTheLauncherVariableIsNotARankCount) {
  const LauncherEnvironment garbage("OMPI_COMM_WORLD_SIZE", "2x");
  EXPECT_EQ(scaleout::launched_ranks(), 1);
}

}  // namespace
}  // namespace infermark

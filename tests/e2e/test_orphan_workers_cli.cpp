// No leftover workers: `run`, `sweep` or `pipeline` killed by SIGKILL (a CI timeout, the
// out-of-memory killer, kill -9) takes its worker or stage processes with it, so none goes on
// measuring beside the next run; and a sweep refuses a study folder that processes of an earlier
// sweep still hold.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "e2e/cli_test_support.hpp"
#include "study/study_lock.hpp"
#include "unit/process_watch.hpp"

namespace {

using namespace infermark::testing;

// An open loop at 20 queries/s for a minute: a cell still running when the test kills its parent.
const std::string kLongLoad = "scenario: server\n  qps: 20\n  duration: 60\n  warmup: 0\n";

class OrphanWorkers : public CliTest {
 protected:
  void SetUp() override { prepare({"onnxruntime"}, "infermark_orphans_"); }
  void TearDown() override {
    for (const pid_t pid : started_)
      if (!process_gone(pid)) kill(pid, SIGKILL);
    for (const pid_t pid : started_) waitpid(pid, nullptr, 0);
    CliTest::TearDown();
  }

  // Starts infermark in the background, its output in the scratch folder; its pid.
  pid_t start(const std::string& args) {
    const auto command = "exec " + std::string(INFERMARK_EXECUTABLE) + " " + args + " >" + (dir_ / "background.out").string() +
                         " 2>" + (dir_ / "background.err").string();
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
      _exit(127);
    }
    if (pid > 0) started_.push_back(pid);
    return pid;
  }

  // Once `parent` has `count` children running `subcommand`, SIGKILLs it and expects every one of
  // them gone within 2 s.
  void expect_children_die_with(pid_t parent, const std::string& subcommand, std::size_t count = 1) {
    ASSERT_GT(parent, 0);
    const auto children = wait_for_children(parent, subcommand, count, 60);
    kill(parent, SIGKILL);
    waitpid(parent, nullptr, 0);
    ASSERT_GE(children.size(), count) << "no " << subcommand << " process started: " << slurp(dir_ / "background.err");
    for (const pid_t child : children) {
      const bool gone = wait_until_gone(child, 2);
      if (!gone) kill(child, SIGKILL);  // not left running after the test
      EXPECT_TRUE(gone) << subcommand << " process " << child << " outlived its parent killed by SIGKILL";
    }
  }

  fs::path study(const std::string& file_name, const std::string& base) {
    const auto path = dir_ / file_name;
    std::ofstream(path) << "name: held\nmodels: [" << (kModels / "tiny_cnn.onnx").string()
                        << "]\nbackends: [onnxruntime]\nbase:\n  " << base;
    return path;
  }

  std::vector<pid_t> started_;
};

}  // namespace

TEST_F(OrphanWorkers, RunKilledBySigkillTakesItsWorkerWithIt) {
  const pid_t run =
      start("run " + (kModels / "tiny_cnn.onnx").string() +
            " -b onnxruntime --scenario server --qps 20 --duration 60 --warmup 0 --out " + (dir_ / "results").string());
  expect_children_die_with(run, "worker");
}

TEST_F(OrphanWorkers, SweepKilledBySigkillTakesItsWorkerWithIt) {
  const pid_t sweep = start("sweep " + study("long.yaml", kLongLoad).string() + " --out " + (dir_ / "results").string());
  expect_children_die_with(sweep, "worker");
}

TEST_F(OrphanWorkers, PipelineKilledBySigkillTakesItsStageProcessesWithIt) {
  const auto file = dir_ / "pipeline.yaml";
  std::ofstream(file) << "name: tiny\nmodes: [processes]\nwarmup: 0\npipeline:\n  stages:\n"
                      << "    - {name: encoder, model: " << (kModels / "tiny_encoder.onnx").string()
                      << ", backend: onnxruntime, threads: 1}\n"
                      << "    - {name: head, model: " << (kModels / "tiny_head.onnx").string()
                      << ", backend: onnxruntime, threads: 1}\n";
  const pid_t pipeline =
      start("pipeline " + file.string() + " --scenario server --qps 20 --duration 60 --out " + (dir_ / "results").string());
  expect_children_die_with(pipeline, "pipeline-stage", 2);
  // A pipeline killed by SIGKILL cannot unlink its shared-memory rings; the next pipeline run
  // removes them, since their owner is gone.
  const auto ring = [&](int k) {
    return fs::path("/dev/shm/infermark-pipeline-" + std::to_string(pipeline) + "-" + std::to_string(k));
  };
  const auto short_run = dir_ / "short.yaml";
  {
    std::ifstream in(file);
    std::ofstream(short_run) << in.rdbuf() << "requests: 3\n";
  }
  const auto next = infermark("pipeline " + short_run.string() + " --out " + (dir_ / "results").string());
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  for (int k = 0; k <= 2; ++k) EXPECT_FALSE(fs::exists(ring(k))) << ring(k) << " outlived its killed run";
  for (int k = 0; k <= 2; ++k) fs::remove(ring(k));  // whatever the outcome, leave nothing behind
}

TEST_F(OrphanWorkers, AResumedSweepRefusesAStudyFolderAnEarlierSweepsWorkerHolds) {
  const auto out = dir_ / "results";
  const pid_t first = start("sweep " + study("long.yaml", kLongLoad).string() + " --out " + out.string());
  ASSERT_GT(first, 0);
  const auto workers = wait_for_children(first, "worker", 1, 60);
  ASSERT_EQ(workers.size(), 1u) << slurp(dir_ / "background.err");
  // Another study file of the same name: the same folder, a cell of a second.
  const auto short_study = study("short.yaml", "runs: 5\n  warmup: 0\n").string();
  auto r = infermark("sweep " + short_study + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const auto folder = (out / "study-held").string();
  EXPECT_NE(r.err.find(folder + ": another sweep of this study is still running"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pid " + std::to_string(workers.front()) + " (infermark worker)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pid " + std::to_string(first) + " (infermark sweep)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "study-held" / "summary.md"));

  // Killed with SIGKILL, the first sweep and its worker leave nothing holding the folder.
  expect_children_die_with(first, "worker");
  r = infermark("sweep " + short_study + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

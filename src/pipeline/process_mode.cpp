// The processes mode: one `infermark pipeline-stage` worker per stage, shared-memory rings between
// them. This process issues tickets, collects finished requests and never loads a framework.
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "pipeline/pipeline_run.hpp"
#include "pipeline/shm_ring.hpp"
#include "process/child_process.hpp"

namespace infermark::pipeline {

std::unique_ptr<PipelineSystem> open_in_process(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode,
                                                int lanes);

namespace {

// How long a worker may take to load its model and create its output ring.
constexpr double kRingWaitS = 600;

std::string ring_name(int k) { return pipeline_ring_name(getpid(), k); }

std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::filesystem::path write_worker_config(const PipelineSpec& spec, std::size_t k, const std::filesystem::path& dir) {
  const auto crops = crops_after(spec, k);
  const nlohmann::json config{{"stage", to_json(spec.stages[k])},
                              {"index", k},
                              {"previous", k ? spec.stages[k - 1].name : ""},
                              {"in", ring_name(static_cast<int>(k))},
                              {"out", ring_name(static_cast<int>(k + 1))},
                              {"queue_depth", spec.queue_depth},
                              {"inputs", to_json(stage_inputs(spec, k))},
                              {"crops_after", crops ? to_json(*crops) : nlohmann::json()},
                              {"ring_wait_s", kRingWaitS},
                              {"info", (dir / ("processes.stage" + std::to_string(k) + ".info.json")).string()}};
  std::filesystem::remove(config.at("info").get<std::string>());  // a previous run's must not be read back
  const auto path = dir / ("processes.stage" + std::to_string(k) + ".json");
  std::ofstream(path) << json_text(config, 2) << '\n';
  return path;
}

// One stage worker process per stage; lanes write tickets into the first ring (one at a time: a
// ring has one producer) and the collector thread reads the last ring and wakes each lane.
class ProcessPipeline final : public PipelinedSystem {
 public:
  ProcessPipeline(const PipelineSpec& spec, int lanes, const RunSettings& settings)
      : PipelinedSystem(spec, lanes), settings_(settings), aborted_([this] { return broken_.load(); }) {
    try {
      start_stage_workers();
    } catch (const std::exception& e) {
      break_down(e.what());
      shut_down();
      throw Error(failure());  // the first failure: a worker's own error says more than the ring wait it aborted
    }
  }
  ~ProcessPipeline() override { close(); }

  std::vector<StageDescription> stages() const override { return stages_; }

  void close() override {
    if (closed_.exchange(true)) return;
    PipelineMessage end;
    end.end_of_stream = true;
    send(end);
    shut_down();
  }

 protected:
  bool send(PipelineMessage& ticket) override {
    std::lock_guard lock(send_mutex_);
    auto slot = tickets_->begin_write(aborted_);
    if (!slot) return false;
    tickets_->end_write(encode(ticket, *slot));
    return true;
  }

 private:
  void start_stage_workers() {
    const auto n = spec_.stages.size();
    std::filesystem::create_directories(settings_.work_dir);
    remove_orphaned_pipeline_rings();  // left by runs killed with SIGKILL
    tickets_ = ShmRing::create(ring_name(0), 1, encoded_size(PipelineMessage{}));
    for (std::size_t k = 0; k < n; ++k) {
      const auto config = write_worker_config(spec_, k, settings_.work_dir);
      const auto log = settings_.work_dir / ("processes.stage" + std::to_string(k) + ".log");
      std::filesystem::remove(log);
      workers_.emplace_back([this, k, config, log] {
        const std::vector<std::string> argv{settings_.executable.string(), "pipeline-stage", "--config", config.string()};
        const auto ended = process::run_child(argv, log, {.timeout_s = settings_.worker_timeout_s}, &broken_);
        if (ended.kind == process::ChildOutcome::Kind::kExited && ended.exit_code == 0) return;
        const auto& stage = spec_.stages[k];
        if (!broken_)
          break_down("stage '" + stage.name + "' (" + stage.backend + ") worker " + ended.describe() + ": " + last_line(log));
      });
    }
    // Waits for every worker to load its stage (the last one's ring appears last).
    results_ = ShmRing::open(ring_name(static_cast<int>(n)), kRingWaitS, aborted_);
    collector_ = std::thread([this] { collect_loop(); });
  }

  void collect_loop() {
    try {
      std::vector<TensorView> views;
      while (auto slot = results_->begin_read(aborted_)) {
        auto message = decode(*slot, views);
        for (const auto& v : views) {
          Tensor t{v.name, v.dtype, v.shape, {}};
          t.data.assign(v.data.begin(), v.data.end());
          message.tensors.push_back(std::move(t));
        }
        results_->end_read();
        if (message.end_of_stream) return;
        deliver(message);
      }
    } catch (const std::exception& e) {
      break_down(e.what());
    }
  }

  void break_down(const std::string& error) {
    fail(error);
    broken_ = true;  // also stops the workers (run_child's stop) and every ring wait
    if (tickets_) tickets_->close();
  }

  void shut_down() {
    if (collector_.joinable()) collector_.join();
    for (auto& w : workers_) w.join();
    workers_.clear();
    const auto n = spec_.stages.size();
    for (std::size_t k = 0; k < n; ++k) {
      const auto info = settings_.work_dir / ("processes.stage" + std::to_string(k) + ".info.json");
      std::ifstream in(info);
      if (!in) continue;
      try {
        stages_.push_back(stage_description_from_json(nlohmann::json::parse(in)));
      } catch (const std::exception& e) {
        break_down(info.string() + ": " + e.what());
      }
    }
    for (std::size_t k = 1; k <= n; ++k) shm_unlink(ring_name(static_cast<int>(k)).c_str());  // left by a crashed worker
  }

  const RunSettings& settings_;
  std::atomic<bool> broken_{false};
  const AbortCheck aborted_;
  std::unique_ptr<ShmRing> tickets_, results_;
  std::mutex send_mutex_;
  std::vector<std::thread> workers_;
  std::thread collector_;
  std::vector<StageDescription> stages_;
  std::atomic<bool> closed_{false};
};

}  // namespace

std::unique_ptr<PipelineSystem> open_pipeline(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode,
                                              int lanes, const RunSettings& settings) {
  if (mode == PipelineMode::kProcesses) return std::make_unique<ProcessPipeline>(spec, lanes, settings);
  return open_in_process(registry, spec, mode, lanes);
}

}  // namespace infermark::pipeline

// The processes mode: one `infermark pipeline-stage` worker per stage, shared-memory rings between
// them. This process issues tickets, collects finished requests and never loads a framework.
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "harness/child_process.hpp"
#include "pipeline/pipeline_run.hpp"
#include "pipeline/shm_ring.hpp"

namespace infermark::pipeline {

ModeOutcome run_in_process(const BackendRegistry& registry, const PipelineSpec& spec, const std::string& mode,
                           const RunSettings& settings);

namespace {

// How long a worker may take to load its model and create its output ring.
constexpr double kRingWaitS = 600;

std::string ring_name(int k) { return "/infermark-pipeline-" + std::to_string(getpid()) + "-" + std::to_string(k); }

std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::filesystem::path write_worker_config(const PipelineSpec& spec, std::size_t k, const std::filesystem::path& dir) {
  const nlohmann::json config{{"stage", to_json(spec.stages[k])},
                              {"index", k},
                              {"previous", k ? spec.stages[k - 1].name : ""},
                              {"in", ring_name(static_cast<int>(k))},
                              {"out", ring_name(static_cast<int>(k + 1))},
                              {"queue_depth", spec.queue_depth},
                              {"batch", spec.inputs.batch},
                              {"seed", spec.inputs.seed},
                              {"ring_wait_s", kRingWaitS},
                              {"info", (dir / ("processes.stage" + std::to_string(k) + ".info.json")).string()}};
  std::filesystem::remove(config.at("info").get<std::string>());  // a previous run's must not be read back
  const auto path = dir / ("processes.stage" + std::to_string(k) + ".json");
  std::ofstream(path) << config.dump(2) << '\n';
  return path;
}

}  // namespace

ModeOutcome run_processes(const PipelineSpec& spec, const RunSettings& settings) {
  ModeOutcome outcome;
  outcome.mode = "processes";
  CircuitBreaker breaker({spec.breaker_after, spec.breaker_cooldown_ms});
  Collector collector(spec, breaker);
  const auto origin_ns = mono_now_ns();
  const auto n = spec.stages.size();
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  auto fail = [&](const std::string& error) {
    std::lock_guard lock(error_mutex);
    if (outcome.error.empty()) outcome.error = error;
    outcome.status = "failed";
    failed = true;
  };
  const AbortCheck aborted = [&] { return failed.load(); };

  std::filesystem::create_directories(settings.work_dir);
  std::unique_ptr<ShmRing> tickets, results;
  std::vector<std::thread> workers;
  try {
    tickets = ShmRing::create(ring_name(0), 1, encoded_size(PipelineMessage{}));
    for (std::size_t k = 0; k < n; ++k) {
      const auto config = write_worker_config(spec, k, settings.work_dir);
      const auto log = settings.work_dir / ("processes.stage" + std::to_string(k) + ".log");
      std::filesystem::remove(log);
      workers.emplace_back([&, k, config, log] {
        const std::vector<std::string> argv{settings.executable.string(), "pipeline-stage", "--config", config.string()};
        const auto ended = harness::run_child(argv, log, settings.worker_timeout_s, &failed);
        if (ended.kind == harness::ChildOutcome::Kind::kExited && ended.exit_code == 0) return;
        const auto& stage = spec.stages[k];
        if (!failed) fail("stage '" + stage.name + "' (" + stage.backend + ") worker " + ended.describe() + ": " + last_line(log));
        tickets->close();
      });
    }
    results = ShmRing::open(ring_name(static_cast<int>(n)), kRingWaitS, aborted);
    std::thread source([&] {
      const auto total = static_cast<std::uint64_t>(spec.warmup + spec.requests);
      auto send = [&](const PipelineMessage& message) {
        auto slot = tickets->begin_write(aborted);
        if (!slot) return false;
        tickets->end_write(encode(message, *slot));
        return true;
      };
      for (std::uint64_t i = 0; i < total && !(settings.stop && settings.stop->load()); ++i) {
        auto ticket = make_ticket(spec, i, breaker);
        if (ticket && !send(*ticket)) return;
      }
      PipelineMessage end;
      end.end_of_stream = true;
      send(end);
    });
    try {
      std::vector<TensorView> views;
      while (auto slot = results->begin_read(aborted)) {
        auto message = decode(*slot, views);
        for (const auto& v : views) {
          Tensor t{v.name, v.dtype, v.shape, {}};
          t.data.assign(v.data.begin(), v.data.end());
          message.tensors.push_back(std::move(t));
        }
        results->end_read();
        if (message.end_of_stream) break;
        collector.complete(message);
      }
    } catch (const std::exception& e) {
      fail(e.what());  // also unblocks the source
    }
    source.join();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  for (auto& w : workers) w.join();
  for (std::size_t k = 0; k < n; ++k) {
    const auto info = settings.work_dir / ("processes.stage" + std::to_string(k) + ".info.json");
    std::ifstream in(info);
    if (!in) continue;
    try {
      outcome.stages.push_back(stage_description_from_json(nlohmann::json::parse(in)));
    } catch (const std::exception& e) {
      fail(info.string() + ": " + e.what());
    }
  }
  for (std::size_t k = 1; k <= n; ++k) shm_unlink(ring_name(static_cast<int>(k)).c_str());  // left by a crashed worker
  if (outcome.status == "ok" && settings.stop && settings.stop->load()) outcome.status = "interrupted";
  outcome.records = std::move(collector.records());
  outcome.last_outputs = std::move(collector.last_outputs());
  outcome.breaker = breaker.to_json(outcome.records.empty() ? origin_ns : outcome.records.front().admitted_ns);
  return outcome;
}

ModeOutcome run_mode(const BackendRegistry& registry, const PipelineSpec& spec, const std::string& mode,
                     const RunSettings& settings) {
  if (mode == "processes") return run_processes(spec, settings);
  return run_in_process(registry, spec, mode, settings);
}

}  // namespace infermark::pipeline

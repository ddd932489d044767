#include "loadgen/single_stream.hpp"

#include "core/clock.hpp"

namespace infermark::loadgen {
namespace {

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

double elapsed_ms(std::int64_t start_ns, std::int64_t end_ns) { return static_cast<double>(end_ns - start_ns) * 1e-6; }

}  // namespace

SingleStreamLog run_single_stream(Session& session, const SingleStreamConfig& config, const std::atomic<bool>* stop) {
  SingleStreamLog log;
  log.latencies_ms.reserve(static_cast<std::size_t>(config.timed_runs));
  for (int i = 0; i < config.warmup_runs && !stopped(stop); ++i) {
    const auto start = mono_now_ns();
    session.run();
    if (i == 0) log.first_warmup_ms = elapsed_ms(start, mono_now_ns());
  }
  const auto loop_start = mono_now_ns();
  auto previous_end = loop_start;
  for (int i = 0; i < config.timed_runs; ++i) {
    if (stopped(stop)) {
      log.interrupted = true;
      break;
    }
    session.run();
    const auto end = mono_now_ns();
    log.latencies_ms.push_back(elapsed_ms(previous_end, end));
    previous_end = end;
  }
  log.wall_s = static_cast<double>(previous_end - loop_start) * 1e-9;
  return log;
}

}  // namespace infermark::loadgen

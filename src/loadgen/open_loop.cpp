#include "loadgen/open_loop.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::loadgen {
namespace {

// One arrival: its query id (arrival order) and scheduled time.
struct Arrival {
  std::uint64_t id = 0;
  std::int64_t scheduled_ns = 0;
};

// A fixed-capacity FIFO of arrivals, allocated once before the run.
class ArrivalQueue {
 public:
  explicit ArrivalQueue(std::size_t capacity) : slots_(capacity) {}

  // Queues an arrival and wakes a blocked worker for it, unless `defer_wake` (the caller has more
  // arrivals due right behind this one and calls wake() after them). Waking costs the caller a
  // futex syscall and, on a VM, an inter-processor interrupt: 6-9 us here, longer than many
  // Poisson gaps, so waking once per burst keeps that off the next arrivals' issue times.
  bool try_push(const Arrival& arrival, bool defer_wake = false) {
    std::size_t wakes = 0;
    {
      std::lock_guard lock(mutex_);
      if (size_ == slots_.size()) return false;
      slots_[(head_ + size_) % slots_.size()] = arrival;
      ++size_;
      ++unwoken_;
      if (!defer_wake) wakes = take_wakes();
    }
    for (; wakes > 0; --wakes) ready_.notify_one();
    return true;
  }

  // Wakes a blocked worker for each arrival queued since the last wake (no syscall when none is blocked).
  void wake() {
    std::size_t wakes = 0;
    {
      std::lock_guard lock(mutex_);
      wakes = take_wakes();
    }
    for (; wakes > 0; --wakes) ready_.notify_one();
  }

  // Blocks until an arrival is queued (returns it) or the queue is closed and empty (returns false).
  bool pop(Arrival& arrival) {
    std::unique_lock lock(mutex_);
    ++blocked_;
    ready_.wait(lock, [&] { return size_ > 0 || closed_; });
    --blocked_;
    if (size_ == 0) return false;
    arrival = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return true;
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

  // Removes what is still waiting (after the drain timeout) and returns how many.
  std::size_t abandon() {
    std::lock_guard lock(mutex_);
    const auto left = size_;
    size_ = 0;
    return left;
  }

 private:
  // Under mutex_: how many notify_one calls the arrivals queued since the last wake need.
  std::size_t take_wakes() {
    const auto wakes = std::min(unwoken_, blocked_);
    unwoken_ = 0;
    return wakes;
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Arrival> slots_;
  std::size_t head_ = 0, size_ = 0;
  std::size_t unwoken_ = 0;  // arrivals queued since the last wake
  std::size_t blocked_ = 0;  // workers in pop(), waiting or about to (a woken one counts until it runs)
  bool closed_ = false;
};

// Sleeps most of the way, then spins: sleeping alone wakes tens of microseconds late.
void wait_until(std::int64_t target_ns) {
  constexpr std::int64_t kSpinWindowNs = 50'000;
  const auto now = mono_now_ns();
  if (target_ns - now > kSpinWindowNs) std::this_thread::sleep_for(std::chrono::nanoseconds(target_ns - now - kSpinWindowNs));
  while (mono_now_ns() < target_ns) {}
}

void serve(SystemUnderTest& system, int lane, ArrivalQueue& queue, std::int64_t start_ns, std::uint64_t seed,
           QueryRecorder& recorder) {
  const auto& samples = system.samples();
  const auto sample_count = samples.sample_count();
  Completion completion;
  Query query;
  Arrival arrival;
  while (queue.pop(arrival)) {
    query.id = arrival.id;
    query.sample = sample_for_query(seed, arrival.id, sample_count);
    completion.clear();
    try {
      system.issue(lane, query, completion);
      const auto done_ns = mono_now_ns();
      recorder.record_query(start_ns, arrival.scheduled_ns, done_ns, samples.group_of(query.sample), completion);
    } catch (const std::exception&) {
      recorder.record_error(mono_now_ns() - start_ns);
    }
  }
}

// Arrival offsets (ns from the start) following a piecewise-constant rate schedule. Each gap
// uses the rate in force when it starts; draws happen one arrival at a time.
class ArrivalClock {
 public:
  ArrivalClock(const std::vector<RateSegment>& schedule, Arrivals arrivals, SeededRandom& random)
      : schedule_(schedule), arrivals_(arrivals), random_(random) {}
  double first() { return arrivals_ == Arrivals::kPoisson ? gap_at(0.0) : 0.0; }
  double after(double offset_ns) { return offset_ns + gap_at(offset_ns); }

 private:
  double gap_at(double offset_ns) {
    double segment_end_ns = 0;
    double rate = schedule_.back().rate_qps;
    for (const auto& segment : schedule_) {
      segment_end_ns += segment.duration_s * 1e9;
      if (offset_ns < segment_end_ns) {
        rate = segment.rate_qps;
        break;
      }
    }
    const double mean_gap_ns = 1e9 / rate;
    return arrivals_ == Arrivals::kPoisson ? random_.exponential(mean_gap_ns) : mean_gap_ns;
  }
  const std::vector<RateSegment>& schedule_;
  Arrivals arrivals_;
  SeededRandom& random_;
};

bool stop_requested(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

}  // namespace

Phase run_open_loop(SystemUnderTest& system, const OpenLoopConfig& config, const std::atomic<bool>* stop,
                    const std::string& label) {
  double total_s = 0;
  for (const auto& segment : config.schedule) {
    if (!(segment.rate_qps > 0)) throw Error("arrival rate must be above 0 queries/s");
    if (!(segment.duration_s > 0)) throw Error("duration must be above 0 s");
    total_s += segment.duration_s;
  }
  if (config.schedule.empty()) throw Error("an open-loop schedule needs at least one segment");
  if (config.lanes < 1 || config.lanes > system.lanes())
    throw Error("open loop needs between 1 and " + std::to_string(system.lanes()) + " lanes, not " +
                std::to_string(config.lanes));
  const auto max_duration_ns = static_cast<std::int64_t>((total_s + config.drain_timeout_s) * 1e9) + 1'000'000'000;
  const auto groups = system.samples().group_count();
  Phase phase(RecorderLimits{config.interval_ns, max_duration_ns, config.max_exact_samples, groups, config.targets});
  phase.label = label.empty() ? "open loop" : label;
  phase.concurrency = config.lanes;
  phase.target_qps = config.schedule.front().rate_qps;

  ArrivalQueue queue(config.max_queue);
  std::vector<QueryRecorder> recorders;
  recorders.reserve(static_cast<std::size_t>(config.lanes));
  for (int i = 0; i < config.lanes; ++i)
    recorders.emplace_back(
        RecorderLimits{config.interval_ns, max_duration_ns, config.max_exact_samples / config.lanes + 1, groups, config.targets});

  const auto start_ns = mono_now_ns();
  phase.started_ns = start_ns;
  std::vector<std::thread> workers;
  for (int i = 0; i < config.lanes; ++i)
    workers.emplace_back(serve, std::ref(system), i, std::ref(queue), start_ns, config.seed,
                         std::ref(recorders[static_cast<std::size_t>(i)]));

  // The scheduler: the k-th arrival's time is drawn when it is due, never pre-generated. Linux
  // rounds sleeps up by the thread's timer slack (50 us by default); ask for none while scheduling.
  const auto previous_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
  SeededRandom random(config.seed);
  ArrivalClock clock(config.schedule, config.arrivals, random);
  const auto end_ns = start_ns + static_cast<std::int64_t>(total_s * 1e9);
  // An arrival with the next one due within kBurstNs is queued without waking a worker; the wake
  // follows the burst's last arrival, or kBurstNs after its first. A query's latency still runs
  // from its scheduled arrival, so a deferred wake shows in it.
  constexpr std::int64_t kBurstNs = 20'000;
  std::int64_t burst_start_ns = -1;  // issue time of the first arrival queued without a wake
  double next_offset_ns = clock.first();
  for (;;) {
    const auto scheduled_ns = start_ns + static_cast<std::int64_t>(next_offset_ns);
    if (scheduled_ns >= end_ns || stop_requested(stop)) break;
    wait_until(scheduled_ns);
    const auto issued_ns = mono_now_ns();
    phase.issue_lateness.record(issued_ns - scheduled_ns);
    ++phase.issued;
    next_offset_ns = clock.after(next_offset_ns);
    const auto next_ns = start_ns + static_cast<std::int64_t>(next_offset_ns);
    if (burst_start_ns < 0) burst_start_ns = issued_ns;
    const bool defer_wake = next_ns - issued_ns < kBurstNs && issued_ns - burst_start_ns < kBurstNs && next_ns < end_ns;
    if (!queue.try_push({phase.issued - 1, scheduled_ns}, defer_wake)) {
      phase.recorder.record_rejection(issued_ns - start_ns);
      if (!defer_wake) queue.wake();
    }
    if (!defer_wake) burst_start_ns = -1;
  }

  if (previous_slack > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(previous_slack), 0, 0, 0);

  // Drain: give queued queries time to finish, then count what is left as errors.
  const auto drain_deadline = mono_now_ns() + static_cast<std::int64_t>(config.drain_timeout_s * 1e9);
  std::atomic<bool> drained{false};
  std::thread drain_guard([&] {
    while (!drained.load() && mono_now_ns() < drain_deadline && !stop_requested(stop))
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto left = queue.abandon();
    for (std::size_t i = 0; i < left; ++i) phase.recorder.record_error(mono_now_ns() - start_ns);
  });
  queue.close();
  for (auto& w : workers) w.join();
  drained = true;
  phase.duration_s = static_cast<double>(mono_now_ns() - start_ns) * 1e-9;
  drain_guard.join();
  for (const auto& r : recorders) phase.recorder.merge(r);
  phase.interrupted = stop_requested(stop);
  return phase;
}

}  // namespace infermark::loadgen

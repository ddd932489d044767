#include "loadgen/open_loop.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "loadgen/conversation.hpp"

namespace infermark::loadgen {
namespace {

// One arrival: its query id (issue order), scheduled time and sample; in a conversation, which
// one and its turn.
struct Arrival {
  std::uint64_t id = 0;
  std::int64_t scheduled_ns = 0;
  std::uint32_t sample = 0;
  std::uint64_t conversation = 0;
  int turn = 0;
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
      if (size_ > blocked_) ++waited_;  // more queued than idle workers: this one waits for a lane
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

  std::uint64_t waited() {
    std::lock_guard lock(mutex_);
    return waited_;
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
  std::size_t unwoken_ = 0;   // arrivals queued since the last wake
  std::size_t blocked_ = 0;   // workers in pop(), waiting or about to (a woken one counts until it runs)
  std::uint64_t waited_ = 0;  // arrivals queued while no worker was idle
  bool closed_ = false;
};

// kSpin: sleeps most of the way, then spins, since sleeping alone wakes tens of microseconds late.
void wait_until(std::int64_t target_ns, Pacing pacing) {
  const std::int64_t kSpinWindowNs = pacing == Pacing::kSpin ? 50'000 : 0;
  const auto now = mono_now_ns();
  if (target_ns - now > kSpinWindowNs) std::this_thread::sleep_for(std::chrono::nanoseconds(target_ns - now - kSpinWindowNs));
  while (mono_now_ns() < target_ns) {}
}

// The sample an arrival carries: drawn from the seed, or (replaying a trace) the arrival's own,
// which is its request's place in the whole trace (`recorded`, when a rank replays only its share).
struct SampleChoice {
  std::uint64_t seed = 0;
  bool in_order = false;
  const std::vector<std::uint32_t>* recorded = nullptr;
  std::uint32_t operator()(std::uint64_t id, std::uint32_t count) const {
    if (!in_order) return sample_for_query(seed, id, count);
    const auto index = recorded && id < recorded->size() ? (*recorded)[id] : id;
    return count > 0 ? static_cast<std::uint32_t>(index % count) : 0;
  }
};

// Open-loop conversations: the schedule's arrivals start conversations, and each later turn
// arrives its think time after the turn before it was answered (that is its scheduled arrival,
// from which its latency runs), so a slow answer delays the rest of its conversation as it would
// a user's. The completions post the next turns; the scheduler issues them when due. A turn that
// failed or was rejected ends its conversation (the history the next one needs is missing).
class ConversationArrivals {
 public:
  ConversationArrivals(const Conversation& conversation, std::uint64_t seed, std::uint32_t samples)
      : conversation_(conversation), seed_(seed), held_(conversation.enabled() ? conversations_held(conversation, samples) : 0) {}
  bool enabled() const { return conversation_.enabled(); }

  // Turn 1 of the next conversation (the library's conversations in order, then again).
  Arrival start(std::uint64_t id, std::int64_t scheduled_ns) {
    std::lock_guard lock(mutex_);
    const auto number = started_++;
    ++open_;
    return {id, scheduled_ns, conversation_sample(conversation_, number, 0, held_), number, 0};
  }

  // After a turn was answered (or failed) at `done_ns`: its next turn is due after the pause, or
  // the conversation ends.
  void after(const Arrival& turn, std::int64_t done_ns, bool succeeded) {
    {
      std::lock_guard lock(mutex_);
      if (succeeded && turn.turn + 1 < conversation_.turns) {
        const auto due = done_ns + think_ns(conversation_, seed_, turn.conversation, turn.turn + 1);
        due_.push({0, due, conversation_sample(conversation_, turn.conversation, turn.turn + 1, held_), turn.conversation,
                   turn.turn + 1});
      } else {
        --open_;
      }
      ++changes_;
    }
    posted_.notify_all();
  }

  // The scheduler's wait for `until_ns`: returns early when a turn is posted or a conversation ends.
  void wait(std::int64_t until_ns) {
    std::unique_lock lock(mutex_);
    const auto seen = changes_;
    const auto left = std::chrono::nanoseconds(std::max<std::int64_t>(0, until_ns - mono_now_ns()));
    posted_.wait_for(lock, left, [&] { return changes_ != seen; });
  }

  // The earliest posted turn's time, if any.
  std::optional<std::int64_t> earliest() const {
    std::lock_guard lock(mutex_);
    return due_.empty() ? std::nullopt : std::optional(due_.top().scheduled_ns);
  }
  Arrival take_earliest() {
    std::lock_guard lock(mutex_);
    auto next = due_.top();
    due_.pop();
    return next;
  }
  std::uint64_t open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }
  // Turns posted but never issued (the drain ran out): how many.
  std::size_t abandon() {
    std::lock_guard lock(mutex_);
    const auto left = due_.size();
    due_ = {};
    return left;
  }

 private:
  struct Later {
    bool operator()(const Arrival& a, const Arrival& b) const { return a.scheduled_ns > b.scheduled_ns; }
  };
  Conversation conversation_;
  std::uint64_t seed_;
  std::uint32_t held_;  // whole conversations in the system's library
  mutable std::mutex mutex_;
  std::condition_variable posted_;
  std::priority_queue<Arrival, std::vector<Arrival>, Later> due_;
  std::uint64_t started_ = 0, open_ = 0, changes_ = 0;
};

void serve(SystemUnderTest& system, int lane, ArrivalQueue& queue, std::int64_t start_ns, ConversationArrivals& conversations,
           QueryRecorder& recorder) {
  const auto& samples = system.samples();
  Completion completion;
  Query query;
  Arrival arrival;
  while (queue.pop(arrival)) {
    query.id = arrival.id;
    query.sample = arrival.sample;
    completion.clear();
    bool succeeded = false;
    std::int64_t done_ns = 0;
    try {
      system.issue(lane, query, completion);
      done_ns = mono_now_ns();
      recorder.record_query(start_ns, arrival.scheduled_ns, done_ns, samples.group_of(query.sample), completion);
      succeeded = true;
    } catch (const std::exception&) {
      done_ns = mono_now_ns();
      recorder.record_error(done_ns - start_ns);
    }
    if (conversations.enabled()) conversations.after(arrival, done_ns, succeeded);
  }
}

// Open loop over an asynchronous system: an arrival starts at once while fewer than `lanes` queries
// are in flight, else waits in the bounded queue; each completion (on the system's thread) records
// its query and starts the oldest waiting arrival. No thread waits per in-flight query.
class AsyncDispatcher {
 public:
  AsyncDispatcher(SystemUnderTest& system, int lanes, std::size_t max_queue, std::int64_t start_ns,
                  ConversationArrivals& conversations, QueryRecorder& recorder)
      : system_(system),
        max_queue_(max_queue),
        start_ns_(start_ns),
        conversations_(conversations),
        recorder_(recorder),
        slots_(static_cast<std::size_t>(lanes)) {
    for (auto& slot : slots_) free_.push_back(&slot);
  }

  // False: the queue is full and the arrival is rejected.
  bool arrive(const Arrival& arrival) {
    Slot* slot = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (free_.empty()) {
        if (waiting_.size() >= max_queue_) return false;
        waiting_.push_back(arrival);
        ++waited_;
        return true;
      }
      slot = free_.back();
      free_.pop_back();
    }
    launch(*slot, arrival);
    return true;
  }

  std::uint64_t waited() {
    std::lock_guard lock(mutex_);
    return waited_;
  }

  // Waits for every arrival to finish, until `deadline_ns` or a stop; what still waits then is
  // counted as errors. Queries in flight are always waited for: the system bounds them itself.
  void drain(std::int64_t deadline_ns, const std::atomic<bool>* stop) {
    std::unique_lock lock(mutex_);
    while (!(free_.size() == slots_.size() && waiting_.empty()) && mono_now_ns() < deadline_ns &&
           !(stop && stop->load(std::memory_order_relaxed)))
      idle_.wait_for(lock, std::chrono::milliseconds(2));
    for (; !waiting_.empty(); waiting_.pop_front()) recorder_.record_error(mono_now_ns() - start_ns_);
    idle_.wait(lock, [&] { return free_.size() == slots_.size(); });
  }

 private:
  struct Slot {
    Query query;
    Completion completion;
    Arrival arrival;
  };

  void launch(Slot& slot, Arrival arrival) {
    for (;;) {
      slot.query.id = arrival.id;
      slot.query.sample = arrival.sample;
      slot.arrival = arrival;
      slot.completion.clear();
      try {
        system_.start(slot.query, slot.completion, [this, &slot](bool succeeded) { completed(slot, succeeded); });
        return;
      } catch (const std::exception&) {  // refused before it started: an error; the slot takes the next arrival
        const auto failed_ns = mono_now_ns();
        if (conversations_.enabled()) conversations_.after(arrival, failed_ns, false);
        std::lock_guard lock(mutex_);
        recorder_.record_error(failed_ns - start_ns_);
        if (!next_waiting(slot, arrival)) return;
      }
    }
  }

  void completed(Slot& slot, bool succeeded) {
    const auto done_ns = mono_now_ns();
    Arrival next;
    {
      std::lock_guard lock(mutex_);
      if (succeeded)
        recorder_.record_query(start_ns_, slot.arrival.scheduled_ns, done_ns, system_.samples().group_of(slot.query.sample),
                               slot.completion);
      else
        recorder_.record_error(done_ns - start_ns_);
      // Before the slot goes back: once every slot is free the run may end and take these with it.
      if (conversations_.enabled()) conversations_.after(slot.arrival, done_ns, succeeded);
      if (!next_waiting(slot, next)) return;
    }
    launch(slot, next);
  }

  // Under mutex_: the oldest waiting arrival for `slot`, or the slot goes back to the free list.
  bool next_waiting(Slot& slot, Arrival& next) {
    if (!waiting_.empty()) {
      next = waiting_.front();
      waiting_.pop_front();
      return true;
    }
    free_.push_back(&slot);
    if (free_.size() == slots_.size()) idle_.notify_all();
    return false;
  }

  SystemUnderTest& system_;
  std::size_t max_queue_;
  std::int64_t start_ns_;
  ConversationArrivals& conversations_;
  QueryRecorder& recorder_;
  std::mutex mutex_;  // guards the recorder, the free list and the waiting arrivals
  std::condition_variable idle_;
  std::vector<Slot> slots_;  // sized once: completions hold references to their slot
  std::vector<Slot*> free_;
  std::deque<Arrival> waiting_;
  std::uint64_t waited_ = 0;  // arrivals that found every slot busy
};

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

// The k-th arrival's offset: drawn at the schedule's rates, or the k-th recorded one; `end_ns`
// (the schedule's end) once the recorded ones are used up.
class ArrivalTimes {
 public:
  ArrivalTimes(const OpenLoopConfig& config, SeededRandom& random, double end_ns)
      : clock_(config.schedule, config.arrivals, random), recorded_(config.recorded_arrivals_ns), end_ns_(end_ns) {}
  double next() {
    const auto k = next_++;
    if (!recorded_.empty()) return k < recorded_.size() ? static_cast<double>(recorded_[k]) : end_ns_;
    offset_ns_ = k == 0 ? clock_.first() : clock_.after(offset_ns_);
    return offset_ns_;
  }

 private:
  ArrivalClock clock_;
  const std::vector<std::int64_t>& recorded_;
  double end_ns_;
  std::size_t next_ = 0;
  double offset_ns_ = 0;
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
  const auto& recorded = config.recorded_arrivals_ns;
  if (!std::is_sorted(recorded.begin(), recorded.end()) || (!recorded.empty() && recorded.front() < 0))
    throw Error("recorded arrivals must not go back in time");
  if (!recorded.empty() && static_cast<double>(recorded.back()) >= total_s * 1e9)
    throw Error("recorded arrivals must fall within the schedule");
  if (config.lanes < 1 || config.lanes > system.lanes())
    throw Error("open loop needs between 1 and " + std::to_string(system.lanes()) + " lanes, not " +
                std::to_string(config.lanes));
  const auto max_duration_ns = static_cast<std::int64_t>((total_s + config.drain_timeout_s) * 1e9) + 1'000'000'000;
  const auto groups = system.samples().group_count();
  Phase phase(RecorderLimits{config.interval_ns, max_duration_ns, config.max_exact_samples, groups, config.targets});
  phase.label = label.empty() ? "open loop" : label;
  phase.concurrency = config.lanes;
  phase.target_qps = config.schedule.front().rate_qps;
  phase.scheduled_s = total_s;

  // Lane threads record into their own recorders; an asynchronous system's completions share one.
  const bool asynchronous = system.asynchronous();
  const int recorder_count = asynchronous ? 1 : config.lanes;
  ArrivalQueue queue(asynchronous ? 1 : config.max_queue);
  std::vector<QueryRecorder> recorders;
  recorders.reserve(static_cast<std::size_t>(recorder_count));
  for (int i = 0; i < recorder_count; ++i)
    recorders.emplace_back(RecorderLimits{config.interval_ns, max_duration_ns, config.max_exact_samples / recorder_count + 1,
                                          groups, config.targets});

  const auto start_ns = mono_now_ns();
  phase.started_ns = start_ns;
  std::optional<AsyncDispatcher> dispatcher;
  std::vector<std::thread> workers;
  const SampleChoice choose{config.seed, !config.recorded_arrivals_ns.empty(),
                            config.recorded_samples.empty() ? nullptr : &config.recorded_samples};
  const auto sample_count = system.samples().sample_count();
  ConversationArrivals conversations(config.conversation, config.seed, sample_count);  // outlives the lanes
  if (asynchronous)
    dispatcher.emplace(system, config.lanes, config.max_queue, start_ns, conversations, recorders[0]);
  else
    for (int i = 0; i < config.lanes; ++i)
      workers.emplace_back(serve, std::ref(system), i, std::ref(queue), start_ns, std::ref(conversations),
                           std::ref(recorders[static_cast<std::size_t>(i)]));
  // Hands an arrival to a lane (the queue, or the dispatcher); a full queue rejects it, and a
  // rejected conversation turn ends its conversation.
  const auto offer = [&](const Arrival& arrival, std::int64_t issued_ns, bool defer_wake) {
    phase.issue_lateness.record(issued_ns - arrival.scheduled_ns);
    ++phase.issued;
    if (dispatcher ? dispatcher->arrive(arrival) : queue.try_push(arrival, defer_wake)) return;
    phase.recorder.record_rejection(issued_ns - start_ns);
    if (!defer_wake) queue.wake();
    if (conversations.enabled()) conversations.after(arrival, issued_ns, false);
  };

  // The scheduler: the k-th arrival's time is drawn when it is due, never pre-generated. Linux
  // rounds sleeps up by the thread's timer slack (50 us by default); ask for none while scheduling.
  const auto previous_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
  SeededRandom random(config.seed);
  ArrivalTimes arrivals(config, random, total_s * 1e9);
  const auto end_ns = start_ns + static_cast<std::int64_t>(total_s * 1e9);
  // An arrival with the next one due within kBurstNs is queued without waking a worker; the wake
  // follows the burst's last arrival, or kBurstNs after its first. A query's latency still runs
  // from its scheduled arrival, so a deferred wake shows in it.
  constexpr std::int64_t kBurstNs = 20'000;
  std::int64_t burst_start_ns = -1;  // issue time of the first arrival queued without a wake
  double next_offset_ns = arrivals.next();
  while (!conversations.enabled()) {
    const auto scheduled_ns = start_ns + static_cast<std::int64_t>(next_offset_ns);
    if (scheduled_ns >= end_ns || stop_requested(stop)) break;
    wait_until(scheduled_ns, config.pacing);
    const auto issued_ns = mono_now_ns();
    const auto id = phase.issued;
    next_offset_ns = arrivals.next();
    const auto next_ns = start_ns + static_cast<std::int64_t>(next_offset_ns);
    if (burst_start_ns < 0) burst_start_ns = issued_ns;
    const bool defer_wake = next_ns - issued_ns < kBurstNs && issued_ns - burst_start_ns < kBurstNs && next_ns < end_ns;
    offer(Arrival{id, scheduled_ns, choose(id, sample_count)}, issued_ns, defer_wake);
    if (!defer_wake) burst_start_ns = -1;
  }
  // Conversations: the schedule starts them until its end; their later turns are issued as they
  // fall due, after the end too, until every conversation finished or the drain time ran out.
  const auto conversations_deadline = end_ns + static_cast<std::int64_t>(config.drain_timeout_s * 1e9);
  while (conversations.enabled() && !stop_requested(stop)) {
    const auto start_due = start_ns + static_cast<std::int64_t>(next_offset_ns);
    const bool starting = start_due < end_ns;
    const auto turn_due = conversations.earliest();
    if (!starting && !turn_due) {
      if (conversations.open() == 0 || mono_now_ns() >= conversations_deadline) break;
      conversations.wait(std::min(conversations_deadline, mono_now_ns() + 10'000'000));  // until a turn is posted
      continue;
    }
    const bool start_next = starting && (!turn_due || start_due <= *turn_due);
    const auto due = start_next ? start_due : *turn_due;
    if (mono_now_ns() < due) {
      conversations.wait(due);  // an earlier turn posted meanwhile goes first
      continue;
    }
    const auto issued_ns = mono_now_ns();
    Arrival arrival;
    if (start_next) {
      arrival = conversations.start(phase.issued, start_due);
      next_offset_ns = arrivals.next();
    } else {
      arrival = conversations.take_earliest();
      arrival.id = phase.issued;
    }
    offer(arrival, issued_ns, false);
  }
  for (auto left = conversations.abandon(); left > 0; --left) phase.recorder.record_error(mono_now_ns() - start_ns);

  if (previous_slack > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(previous_slack), 0, 0, 0);

  // Drain: give queued queries time to finish, then count what is left as errors.
  const auto drain_deadline = mono_now_ns() + static_cast<std::int64_t>(config.drain_timeout_s * 1e9);
  if (dispatcher) {
    dispatcher->drain(drain_deadline, stop);
    phase.waited_for_lane = dispatcher->waited();
    phase.duration_s = static_cast<double>(mono_now_ns() - start_ns) * 1e-9;
    phase.recorder.merge(recorders[0]);
    phase.interrupted = stop_requested(stop);
    return phase;
  }
  std::atomic<bool> drained{false};
  std::thread drain_guard([&] {
    while (!drained.load() && mono_now_ns() < drain_deadline && !stop_requested(stop))
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto left = queue.abandon();
    for (std::size_t i = 0; i < left; ++i) phase.recorder.record_error(mono_now_ns() - start_ns);
  });
  queue.close();
  for (auto& w : workers) w.join();
  phase.waited_for_lane = queue.waited();
  drained = true;
  phase.duration_s = static_cast<double>(mono_now_ns() - start_ns) * 1e-9;
  drain_guard.join();
  for (const auto& r : recorders) phase.recorder.merge(r);
  phase.interrupted = stop_requested(stop);
  return phase;
}

}  // namespace infermark::loadgen

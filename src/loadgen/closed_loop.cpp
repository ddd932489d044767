#include "loadgen/closed_loop.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace infermark::loadgen {
namespace {

bool stop_requested(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

// Shared between the clients: how many queries have been claimed, and whether to stop.
struct LoopControl {
  const ClosedLoopConfig& config;
  std::int64_t start_ns;
  std::atomic<std::uint64_t> claimed{0};
  std::atomic<std::uint64_t> conversations_started{config.first_conversation};

  bool talking() const { return config.conversation.enabled(); }

  // The sample of a client's next query: drawn from the seed, or its conversation's next turn.
  std::uint32_t sample_for(ConversationCursor& cursor, std::uint64_t id, std::uint32_t sample_count) {
    if (!talking()) return sample_for_query(config.seed, id, sample_count);
    return cursor.next_sample(config.conversation, conversations_started, conversations_held(config.conversation, sample_count));
  }

  // Claims the next query id, or says the run is over: max_duration is a hard cap; max_queries
  // ends the run once min_duration has also passed. Exact under concurrency (compare-exchange).
  bool claim_next(std::int64_t now_ns, std::uint64_t& id) {
    auto n = claimed.load(std::memory_order_relaxed);
    do {
      if (over_after(now_ns, n)) return false;
    } while (!claimed.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    id = n;
    return true;
  }

  // No query can be claimed any more (claim_next's rule). A thinking user stops thinking then, so
  // the run ends with its last answer.
  bool over(std::int64_t now_ns) const { return over_after(now_ns, claimed.load(std::memory_order_relaxed)); }

  // The rule, after `claimed_so_far` queries: the cap has passed, or max_queries are out and
  // min_duration has passed.
  bool over_after(std::int64_t now_ns, std::uint64_t claimed_so_far) const {
    const auto elapsed_s = static_cast<double>(now_ns - start_ns) * 1e-9;
    return elapsed_s >= config.max_duration_s ||
           (config.max_queries && claimed_so_far >= config.max_queries && elapsed_s >= config.min_duration_s);
  }

  // Conversations: when the last answer came, so the phase ends there and not after a pause.
  std::atomic<std::int64_t> last_done_ns{0};
  void answered(std::int64_t done_ns) {
    auto seen = last_done_ns.load(std::memory_order_relaxed);
    while (seen < done_ns && !last_done_ns.compare_exchange_weak(seen, done_ns, std::memory_order_relaxed)) {}
  }
};

// A user's think time: sleeps `pause_ns`, or less when the run stops or is over first.
void think(std::int64_t pause_ns, const LoopControl& control, const std::atomic<bool>* stop) {
  const auto until = mono_now_ns() + pause_ns;
  for (auto now = mono_now_ns(); now < until && !stop_requested(stop) && !control.over(now); now = mono_now_ns())
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(until - now, 20'000'000)));
}

void client(SystemUnderTest& system, int lane, LoopControl& control, QueryRecorder& recorder, const std::atomic<bool>* stop) {
  const auto& samples = system.samples();
  const auto sample_count = samples.sample_count();
  Completion completion;
  Query query;
  ConversationCursor cursor;
  for (;;) {
    const auto issue_ns = mono_now_ns();
    if (stop_requested(stop) || !control.claim_next(issue_ns, query.id)) return;
    query.sample = control.sample_for(cursor, query.id, sample_count);
    completion.clear();
    bool succeeded = true;
    try {
      system.issue(lane, query, completion);
      const auto done_ns = mono_now_ns();
      recorder.record_query(control.start_ns, issue_ns, done_ns, samples.group_of(query.sample), completion);
    } catch (const std::exception&) {
      recorder.record_error(mono_now_ns() - control.start_ns);
      succeeded = false;
    }
    if (!control.talking()) continue;
    control.answered(mono_now_ns());
    think(cursor.after_query(control.config.conversation, control.config.seed, succeeded), control, stop);
  }
}

// Runs each task at its time on a thread of its own (an asynchronous system's users thinking, so
// no completion thread sleeps); at a stop, or once the run is over, at once.
class PauseTimer {
 public:
  PauseTimer(const LoopControl& control, const std::atomic<bool>* stop)
      : control_(control), stop_(stop), thread_([this] { loop(); }) {}
  ~PauseTimer() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void at(std::int64_t due_ns, std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      due_.emplace(due_ns, std::move(task));
    }
    wake_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!(closing_ && due_.empty())) {
      const auto now = mono_now_ns();
      const bool hurry = stop_requested(stop_) || control_.over(now) || closing_;
      if (!due_.empty() && (hurry || due_.begin()->first <= now)) {
        auto task = std::move(due_.begin()->second);
        due_.erase(due_.begin());
        lock.unlock();
        task();
        lock.lock();
        continue;
      }
      const auto wait_ns = due_.empty() ? 20'000'000 : std::min<std::int64_t>(due_.begin()->first - now, 20'000'000);
      wake_.wait_for(lock, std::chrono::nanoseconds(wait_ns));
    }
  }
  const LoopControl& control_;
  const std::atomic<bool>* stop_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<std::int64_t, std::function<void()>> due_;
  bool closing_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// Closed loop over an asynchronous system: `concurrency` queries in flight, each completion
// (on the system's thread) recording its query and starting the next, so no thread waits per client.
class AsyncClients {
 public:
  AsyncClients(SystemUnderTest& system, LoopControl& control, QueryRecorder& recorder, const std::atomic<bool>* stop)
      : system_(system), control_(control), recorder_(recorder), stop_(stop) {
    if (control.talking()) timer_.emplace(control, stop);
  }

  void run(int concurrency) {
    clients_.resize(static_cast<std::size_t>(concurrency));
    active_ = concurrency;
    for (auto& client : clients_) issue_next(client);
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return active_ == 0; });
  }

 private:
  struct Client {
    Query query;
    Completion completion;
    std::int64_t issue_ns = 0;
    ConversationCursor cursor;
  };

  void issue_next(Client& client) {
    const auto& samples = system_.samples();
    for (;;) {
      client.issue_ns = mono_now_ns();
      if (stop_requested(stop_) || !control_.claim_next(client.issue_ns, client.query.id)) break;
      client.query.sample = control_.sample_for(client.cursor, client.query.id, samples.sample_count());
      client.completion.clear();
      try {
        system_.start(client.query, client.completion, [this, &client](bool succeeded) { completed(client, succeeded); });
        return;
      } catch (const std::exception&) {  // refused before it started: an error, then the next query
        {
          std::lock_guard lock(mutex_);
          recorder_.record_error(mono_now_ns() - control_.start_ns);
        }
        if (control_.talking() && pause_before_next(client, false)) return;
      }
    }
    std::lock_guard lock(mutex_);
    if (--active_ == 0) finished_.notify_all();
  }

  void completed(Client& client, bool succeeded) {
    const auto done_ns = mono_now_ns();
    {
      std::lock_guard lock(mutex_);
      if (succeeded)
        recorder_.record_query(control_.start_ns, client.issue_ns, done_ns, system_.samples().group_of(client.query.sample),
                               client.completion);
      else
        recorder_.record_error(done_ns - control_.start_ns);
    }
    if (control_.talking()) {
      control_.answered(done_ns);
      if (pause_before_next(client, succeeded)) return;
    }
    issue_next(client);
  }

  // A conversation's user thinks before the next turn: true when the next query is left to the timer.
  bool pause_before_next(Client& client, bool succeeded) {
    const auto pause = client.cursor.after_query(control_.config.conversation, control_.config.seed, succeeded);
    if (pause <= 0) return false;
    timer_->at(mono_now_ns() + pause, [this, &client] { issue_next(client); });
    return true;
  }

  SystemUnderTest& system_;
  LoopControl& control_;
  QueryRecorder& recorder_;
  const std::atomic<bool>* stop_;
  std::deque<Client> clients_;  // a deque: completions hold references to their client
  std::mutex mutex_;            // guards the recorder and active_
  std::condition_variable finished_;
  int active_ = 0;
  std::optional<PauseTimer> timer_;  // conversations only; last: joined first, while the clients it calls exist
};

}  // namespace

Phase run_closed_loop(SystemUnderTest& system, const ClosedLoopConfig& config, const std::atomic<bool>* stop,
                      const std::string& label) {
  if (config.concurrency < 1) throw Error("concurrency must be at least 1");
  if (config.conversation.enabled()) conversations_held(config.conversation, system.samples().sample_count());
  if (config.concurrency > system.lanes())
    throw Error("concurrency " + std::to_string(config.concurrency) + " exceeds the " + std::to_string(system.lanes()) +
                " lanes of the system under test");
  const RecorderLimits limits{config.interval_ns, static_cast<std::int64_t>(config.max_duration_s * 1e9) + 1'000'000'000,
                              config.max_exact_samples, system.samples().group_count(), config.targets};
  Phase phase(limits);
  phase.label = label.empty() ? "concurrency " + std::to_string(config.concurrency) : label;
  phase.concurrency = config.concurrency;

  // Each client thread records into its own recorder (no locks), built before the clock starts;
  // an asynchronous system's completions share one, under a lock.
  const int recorder_count = system.asynchronous() ? 1 : config.concurrency;
  std::vector<QueryRecorder> recorders;
  recorders.reserve(static_cast<std::size_t>(recorder_count));
  for (int i = 0; i < recorder_count; ++i)
    recorders.emplace_back(RecorderLimits{limits.interval_ns, limits.max_duration_ns,
                                          limits.max_exact_samples / recorder_count + 1, limits.groups, limits.targets});

  LoopControl control{config, mono_now_ns()};
  phase.started_ns = control.start_ns;
  if (system.asynchronous()) {
    AsyncClients(system, control, recorders[0], stop).run(config.concurrency);
  } else if (config.concurrency == 1) {
    client(system, 0, control, recorders[0], stop);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < config.concurrency; ++i)
      threads.emplace_back(client, std::ref(system), i, std::ref(control), std::ref(recorders[static_cast<std::size_t>(i)]),
                           stop);
    for (auto& t : threads) t.join();
  }
  // Conversations end at the last answer: users still thinking when the run was over add nothing.
  const auto end_ns = control.talking() && control.last_done_ns > control.start_ns ? control.last_done_ns.load() : mono_now_ns();
  phase.duration_s = static_cast<double>(end_ns - control.start_ns) * 1e-9;
  for (const auto& r : recorders) phase.recorder.merge(r);
  phase.issued = phase.recorder.completed() + phase.recorder.errors();
  phase.interrupted = stop_requested(stop);
  phase.minimums_met = phase.recorder.completed() >= config.min_queries && phase.duration_s >= config.min_duration_s;
  return phase;
}

void warm_up(SystemUnderTest& system, int concurrency, std::uint64_t queries, double seconds, std::uint64_t seed,
             const std::atomic<bool>* stop, const Conversation& conversation) {
  if (queries == 0 && seconds <= 0) return;
  ClosedLoopConfig config;
  config.concurrency = concurrency;
  config.min_queries = queries;
  config.min_duration_s = seconds;
  config.max_queries = std::max<std::uint64_t>(queries, 1);
  config.max_duration_s = std::max(seconds, 3600.0);
  config.max_exact_samples = 0;
  config.interval_ns = 1'000'000'000;
  config.seed = seed ^ 0x5741524D55505EEDull;  // its own sample stream, apart from the measured one
  if (conversation.enabled()) {
    config.conversation = Conversation{conversation.turns, 0, 0};
    config.first_conversation = system.samples().sample_count() / static_cast<std::uint32_t>(conversation.turns) / 2;
  }
  run_closed_loop(system, config, stop, "warm-up");
}

}  // namespace infermark::loadgen

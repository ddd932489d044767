// The serial and threads modes: every stage in this process.
#include <memory>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "pipeline/bounded_queue.hpp"
#include "pipeline/pipeline_run.hpp"

namespace infermark::pipeline {

std::unique_ptr<PipelineSystem> open_in_process(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode,
                                                int lanes);

namespace {

using Stages = std::vector<std::unique_ptr<PipelineStage>>;

Stages load_stages(const BackendRegistry& registry, const PipelineSpec& spec) {
  Stages stages;
  for (std::size_t k = 0; k < spec.stages.size(); ++k)
    stages.push_back(std::make_unique<PipelineStage>(registry, spec.stages[k], static_cast<int>(k), stage_inputs(spec, k),
                                                     k ? spec.stages[k - 1].name : "", crops_after(spec, k)));
  // Feed each stage its predecessor's first outputs: a handoff that cannot work fails here,
  // before anything is timed.
  for (std::size_t k = 1; k < stages.size(); ++k) stages[k]->feed(views_of(stages[k - 1]->first_outputs()));
  return stages;
}

std::vector<StageDescription> descriptions(const Stages& stages) {
  std::vector<StageDescription> out;
  for (const auto& s : stages) out.push_back(s->description());
  return out;
}

// One request at a time runs every stage in the lane that issued it; other lanes wait their turn
// (the clock of a request starts when it gets the pipeline, as stage 1 taking it).
class SerialPipeline final : public PipelineSystem {
 public:
  SerialPipeline(const BackendRegistry& registry, const PipelineSpec& spec, int lanes)
      : PipelineSystem(spec, lanes), stages_(load_stages(registry, spec)) {}

  std::vector<StageDescription> stages() const override { return descriptions(stages_); }

  void issue(int, const loadgen::Query&, loadgen::Completion&) override {
    std::lock_guard lock(mutex_);
    if (const auto error = failure(); !error.empty()) throw Error(error);
    auto message = admit();
    try {
      for (auto& stage : stages_) {
        process(*stage, message, views_of(message.tensors));
        if (message.dropped_at_stage >= 0) break;
      }
    } catch (const std::exception& e) {
      std::lock_guard failure_lock(failure_mutex_);
      failure_ = e.what();  // a stage that throws breaks the pipeline, as in the other modes
      throw;
    }
    collect(message);
    check(message);
  }

  std::string failure() const override {
    std::lock_guard lock(failure_mutex_);
    return failure_;
  }

 private:
  Stages stages_;
  std::mutex mutex_;  // one request in the pipeline at a time
  mutable std::mutex failure_mutex_;
  std::string failure_;
};

// A thread per stage with bounded queues between them; lanes push tickets into stage 1's queue
// and the collector thread wakes each lane when its request leaves the last stage.
class ThreadedPipeline final : public PipelinedSystem {
 public:
  using Queue = BoundedQueue<PipelineMessage>;

  ThreadedPipeline(const BackendRegistry& registry, const PipelineSpec& spec, int lanes)
      : PipelinedSystem(spec, lanes), stages_(load_stages(registry, spec)), tickets_(1) {
    for (std::size_t k = 0; k < stages_.size(); ++k)
      links_.push_back(std::make_unique<Queue>(static_cast<std::size_t>(spec.queue_depth)));
    for (std::size_t k = 0; k < stages_.size(); ++k) threads_.emplace_back([this, k] { serve_stage(k); });
    threads_.emplace_back([this] { collect_loop(); });
  }
  ~ThreadedPipeline() override { close(); }

  std::vector<StageDescription> stages() const override { return descriptions(stages_); }

  void close() override {
    if (closed_.exchange(true)) return;
    PipelineMessage end;
    end.end_of_stream = true;
    tickets_.push(end);  // fails (and the threads are already ending) when the pipeline broke
    for (auto& t : threads_) t.join();
  }

 protected:
  // Stage 1 takes the next request when free; the request's clock starts then.
  bool send(PipelineMessage& ticket) override { return tickets_.push(ticket); }

 private:
  void serve_stage(std::size_t k) {
    Queue& in = k == 0 ? tickets_ : *links_[k - 1];
    Queue& out = *links_[k];
    try {
      while (auto message = in.pop()) {
        if (!message->end_of_stream) process(*stages_[k], *message, views_of(message->tensors));
        const bool end = message->end_of_stream;
        if (!out.push(*message) || end) return;
      }
    } catch (const std::exception& e) {
      break_down(e.what());
    }
  }

  void collect_loop() {
    while (auto message = links_.back()->pop()) {
      if (message->end_of_stream) return;
      deliver(*message);
    }
  }

  void break_down(const std::string& error) {
    fail(error);
    tickets_.close();
    for (auto& q : links_) q->close();
  }

  Stages stages_;
  Queue tickets_;
  std::vector<std::unique_ptr<Queue>> links_;
  std::vector<std::thread> threads_;
  std::atomic<bool> closed_{false};
};

}  // namespace

std::unique_ptr<PipelineSystem> open_in_process(const BackendRegistry& registry, const PipelineSpec& spec, PipelineMode mode,
                                                int lanes) {
  if (mode == PipelineMode::kSerial) return std::make_unique<SerialPipeline>(registry, spec, lanes);
  return std::make_unique<ThreadedPipeline>(registry, spec, lanes);
}

}  // namespace infermark::pipeline

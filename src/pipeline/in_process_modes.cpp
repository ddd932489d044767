// The serial and threads modes: every stage in this process.
#include <memory>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "pipeline/bounded_queue.hpp"
#include "pipeline/pipeline_run.hpp"

namespace infermark::pipeline {

ModeOutcome run_in_process(const BackendRegistry& registry, const PipelineSpec& spec, const std::string& mode,
                           const RunSettings& settings);

namespace {

bool stopping(const RunSettings& settings) { return settings.stop && settings.stop->load(); }

std::vector<std::unique_ptr<PipelineStage>> load_stages(const BackendRegistry& registry, const PipelineSpec& spec) {
  std::vector<std::unique_ptr<PipelineStage>> stages;
  for (std::size_t k = 0; k < spec.stages.size(); ++k)
    stages.push_back(std::make_unique<PipelineStage>(registry, spec.stages[k], static_cast<int>(k), spec.inputs,
                                                     k ? spec.stages[k - 1].name : ""));
  // Feed each stage its predecessor's first outputs: a handoff that cannot work fails here,
  // before anything is timed.
  for (std::size_t k = 1; k < stages.size(); ++k) stages[k]->feed(views_of(stages[k - 1]->first_outputs()));
  return stages;
}

void run_serial(std::vector<std::unique_ptr<PipelineStage>>& stages, const PipelineSpec& spec, CircuitBreaker& breaker,
                Collector& collector, const RunSettings& settings, ModeOutcome& outcome) {
  const auto total = static_cast<std::uint64_t>(spec.warmup + spec.requests);
  for (std::uint64_t i = 0; i < total; ++i) {
    if (stopping(settings)) {
      outcome.status = "interrupted";
      return;
    }
    auto message = make_ticket(spec, i, breaker);
    if (!message) continue;
    for (auto& stage : stages) {
      process(*stage, *message, views_of(message->tensors));
      if (message->dropped_at_stage >= 0) break;
    }
    collector.complete(*message);
  }
}

void run_threads(std::vector<std::unique_ptr<PipelineStage>>& stages, const PipelineSpec& spec, CircuitBreaker& breaker,
                 Collector& collector, const RunSettings& settings, ModeOutcome& outcome) {
  using Queue = BoundedQueue<PipelineMessage>;
  Queue tickets(1);  // stage 1 takes the next request when free; the clock starts then
  std::vector<std::unique_ptr<Queue>> links;
  for (std::size_t k = 0; k < stages.size(); ++k) links.push_back(std::make_unique<Queue>(static_cast<std::size_t>(spec.queue_depth)));
  std::mutex error_mutex;
  auto fail = [&](const std::string& error) {
    {
      std::lock_guard lock(error_mutex);
      if (outcome.error.empty()) outcome.error = error;
      outcome.status = "failed";
    }
    tickets.close();
    for (auto& q : links) q->close();
  };

  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    const auto total = static_cast<std::uint64_t>(spec.warmup + spec.requests);
    for (std::uint64_t i = 0; i < total && !stopping(settings); ++i) {
      auto ticket = make_ticket(spec, i, breaker);
      if (ticket && !tickets.push(*ticket)) return;
    }
    PipelineMessage end;
    end.end_of_stream = true;
    tickets.push(end);
  });
  for (std::size_t k = 0; k < stages.size(); ++k) {
    threads.emplace_back([&, k] {
      Queue& in = k == 0 ? tickets : *links[k - 1];
      Queue& out = *links[k];
      try {
        while (auto message = in.pop()) {
          if (!message->end_of_stream) process(*stages[k], *message, views_of(message->tensors));
          const bool end = message->end_of_stream;
          if (!out.push(*message) || end) return;
        }
      } catch (const std::exception& e) {
        fail(e.what());
      }
    });
  }
  while (auto message = links.back()->pop()) {
    if (message->end_of_stream) break;
    collector.complete(*message);
  }
  for (auto& t : threads) t.join();
  if (outcome.status == "ok" && stopping(settings)) outcome.status = "interrupted";
}

}  // namespace

ModeOutcome run_in_process(const BackendRegistry& registry, const PipelineSpec& spec, const std::string& mode,
                           const RunSettings& settings) {
  ModeOutcome outcome;
  outcome.mode = mode;
  CircuitBreaker breaker({spec.breaker_after, spec.breaker_cooldown_ms});
  Collector collector(spec, breaker);
  const auto origin_ns = mono_now_ns();
  try {
    auto stages = load_stages(registry, spec);
    for (const auto& s : stages) outcome.stages.push_back(s->description());
    if (mode == "serial")
      run_serial(stages, spec, breaker, collector, settings, outcome);
    else
      run_threads(stages, spec, breaker, collector, settings, outcome);
  } catch (const std::exception& e) {
    outcome.status = "failed";
    outcome.error = e.what();
  }
  outcome.records = std::move(collector.records());
  outcome.last_outputs = std::move(collector.last_outputs());
  outcome.breaker = breaker.to_json(outcome.records.empty() ? origin_ns : outcome.records.front().admitted_ns);
  return outcome;
}

}  // namespace infermark::pipeline

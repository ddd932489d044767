#include "pipeline/request_flow.hpp"

#include "core/clock.hpp"

namespace infermark::pipeline {

std::optional<PipelineMessage> make_ticket(const PipelineSpec& spec, std::uint64_t index, bool timed, CircuitBreaker& breaker) {
  if (timed && !breaker.admit(mono_now_ns())) return std::nullopt;
  PipelineMessage ticket;
  ticket.request = index;
  if (timed && spec.timeout_ms > 0) ticket.timeout_ns = static_cast<std::int64_t>(spec.timeout_ms * 1e6);
  return ticket;
}

void process(PipelineStage& stage, PipelineMessage& message, const std::vector<TensorView>& inputs,
             const std::function<void()>& inputs_consumed) {
  const int k = stage.index();
  auto& stamps = message.stamps[static_cast<std::size_t>(k)];
  stamps.received_ns = mono_now_ns();
  if (k == 0) {
    message.admitted_ns = stamps.received_ns;
    message.deadline_ns = message.timeout_ns > 0 ? message.admitted_ns + message.timeout_ns : 0;
  }
  if (message.dropped_at_stage < 0 && message.deadline_ns > 0 && stamps.received_ns > message.deadline_ns)
    message.dropped_at_stage = k;
  if (message.dropped_at_stage >= 0) {
    if (inputs_consumed) inputs_consumed();
    message.tensors.clear();
    return;
  }
  if (k > 0)
    stage.feed(inputs);
  else
    message.sample = stage.select_sample(message.request);
  if (inputs_consumed) inputs_consumed();
  stamps.started_ns = mono_now_ns();
  stage.infer();
  stamps.finished_ns = mono_now_ns();
  stage.hand_over(message);
  stamps.sent_ns = mono_now_ns();
}

Collector::Collector(const PipelineSpec& spec, CircuitBreaker& breaker) : spec_(spec), breaker_(breaker) {
  if (spec.text_check) text_.emplace(*spec.text_check);
}

std::optional<result::TextCheckRecord> Collector::text_check() const {
  if (!text_) return std::nullopt;
  auto record = text_->record();
  if (!text_error_.empty()) record.error = text_error_;
  return record;
}

void Collector::complete(PipelineMessage& message, bool timed) {
  if (timed && text_ && message.dropped_at_stage < 0) {
    try {
      text_->add(message.sample, message.tensors, message.text_lines);
    } catch (const std::exception& e) {  // the check fails, not the pipeline: its timings still count
      if (text_error_.empty()) text_error_ = e.what();
    }
  }
  if (message.dropped_at_stage < 0) {
    last_outputs_ = std::move(message.tensors);
    last_sample_ = message.sample;
  }
  if (!timed) return;
  RequestRecord record;
  record.request = message.request;
  record.admitted_ns = message.admitted_ns;
  record.dropped_at_stage = message.dropped_at_stage;
  record.stamps = message.stamps;
  const auto last = spec_.stages.size() - 1;
  record.completed_ns = message.dropped_at_stage >= 0
                            ? message.stamps[static_cast<std::size_t>(message.dropped_at_stage)].received_ns
                            : message.stamps[last].sent_ns;
  record.timed_out = message.dropped_at_stage >= 0 || (message.deadline_ns > 0 && record.completed_ns > message.deadline_ns);
  breaker_.record(record.timed_out, record.completed_ns);
  records_.push_back(record);
}

}  // namespace infermark::pipeline

#include "pipeline/pipeline_system.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace infermark::pipeline {

LaneSlots::LaneSlots(int lanes) : slots_(static_cast<std::size_t>(std::max(lanes, 1))) {}

void LaneSlots::expect(int lane, std::uint64_t request) {
  std::lock_guard lock(mutex_);
  if (!error_.empty()) throw Error(error_);
  auto& slot = slots_.at(static_cast<std::size_t>(lane));
  if (slot.state != State::kIdle) throw Error("internal error: lane " + std::to_string(lane) + " issued while busy");
  slot.state = State::kWaiting;
  slot.request = request;
}

void LaneSlots::cancel(int lane) {
  std::lock_guard lock(mutex_);
  slots_.at(static_cast<std::size_t>(lane)).state = State::kIdle;
}

PipelineMessage LaneSlots::wait(int lane) {
  std::unique_lock lock(mutex_);
  auto& slot = slots_.at(static_cast<std::size_t>(lane));
  slot.done.wait(lock, [&] { return slot.state == State::kDone || !error_.empty(); });
  const bool done = slot.state == State::kDone;
  slot.state = State::kIdle;
  if (!done) throw Error(error_);
  return std::move(slot.message);
}

bool LaneSlots::deliver(PipelineMessage& message) {
  std::lock_guard lock(mutex_);
  for (auto& slot : slots_) {
    if (slot.state != State::kWaiting || slot.request != message.request) continue;
    slot.message = std::move(message);
    slot.state = State::kDone;
    slot.done.notify_one();
    return true;
  }
  return false;
}

void LaneSlots::fail(const std::string& error) {
  std::lock_guard lock(mutex_);
  if (error_.empty()) error_ = error.empty() ? "the pipeline failed" : error;
  for (auto& slot : slots_) slot.done.notify_all();
}

std::string LaneSlots::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

PipelineSystem::PipelineSystem(const PipelineSpec& spec, int lanes)
    : spec_(spec),
      lanes_(std::max(lanes, 1)),
      breaker_({spec.breaker_after, spec.breaker_cooldown_ms}),
      collector_(spec, breaker_) {}

void PipelineSystem::set_warming(bool warming) {
  warming_ = warming;
  if (!warming) first_timed_ = next_request_.load();
}

PipelineMessage PipelineSystem::admit() {
  const auto index = next_request_.fetch_add(1);
  auto ticket = make_ticket(spec_, index, !warming_.load(), breaker_);
  if (!ticket) throw Error(fmt::format("request {} rejected: the circuit breaker is open", index));
  return std::move(*ticket);
}

void PipelineSystem::collect(PipelineMessage& message) {
  std::lock_guard lock(collect_mutex_);
  collector_.complete(message, message.request >= first_timed_.load() && !warming_.load());
}

void PipelineSystem::check(const PipelineMessage& message) const {
  if (message.dropped_at_stage >= 0)
    throw Error(fmt::format("request {} timed out ({} ms) before stage '{}'", message.request, spec_.timeout_ms,
                            spec_.stages[static_cast<std::size_t>(message.dropped_at_stage)].name));
  const auto last = spec_.stages.size() - 1;
  if (message.deadline_ns > 0 && message.stamps[last].sent_ns > message.deadline_ns)
    throw Error(fmt::format("request {} completed after its timeout ({} ms)", message.request, spec_.timeout_ms));
}

std::vector<RequestRecord> PipelineSystem::take_records() {
  std::lock_guard lock(collect_mutex_);
  return std::move(collector_.records());
}

std::vector<Tensor> PipelineSystem::take_last_outputs() {
  std::lock_guard lock(collect_mutex_);
  return std::move(collector_.last_outputs());
}

std::optional<result::TextCheckRecord> PipelineSystem::text_check() {
  std::lock_guard lock(collect_mutex_);
  return collector_.text_check();
}

std::uint32_t PipelineSystem::last_sample() {
  std::lock_guard lock(collect_mutex_);
  return collector_.last_sample();
}

void PipelinedSystem::issue(int lane, const loadgen::Query&, loadgen::Completion&) {
  auto ticket = admit();
  slots_.expect(lane, ticket.request);
  if (!send(ticket)) {
    slots_.cancel(lane);
    const auto error = slots_.error();
    throw Error(error.empty() ? "the pipeline has stopped" : error);
  }
  const auto message = slots_.wait(lane);
  if (message.request != ticket.request)
    throw Error(
        fmt::format("internal error: lane {} woke with request {}, not its own {}", lane, message.request, ticket.request));
  check(message);
}

void PipelinedSystem::deliver(PipelineMessage& message) {
  collect(message);
  slots_.deliver(message);
}

}  // namespace infermark::pipeline

// The per-request steps every mode shares: admitting a request (the circuit breaker decides),
// running it through one stage (dropping it when its deadline has passed) and collecting it at
// the end of the pipeline.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/circuit_breaker.hpp"
#include "pipeline/pipeline_spec.hpp"
#include "pipeline/pipeline_stage.hpp"
#include "pipeline/text_check.hpp"

namespace infermark::pipeline {

// One timed request as the end of the pipeline saw it.
struct RequestRecord {
  std::uint64_t request = 0;
  std::int64_t admitted_ns = 0;
  std::int64_t completed_ns = 0;  // last stage done, or the moment it was dropped
  int dropped_at_stage = -1;
  bool timed_out = false;  // dropped, or completed after its deadline
  std::array<StageStamps, kMaxStages> stamps{};
};

// Request `index` as a ticket for stage 1, or nullopt when the open breaker rejects it. Untimed
// (warm-up) requests bypass the breaker and carry no timeout.
std::optional<PipelineMessage> make_ticket(const PipelineSpec& spec, std::uint64_t index, bool timed, CircuitBreaker& breaker);

// Runs `message` through `stage`: stage 1 starts its clock and deadline; a request past its
// deadline is dropped (not run, its tensors released); otherwise `inputs` (the previous stage's
// outputs) are fed, `inputs_consumed` is called (a shared-memory slot may then be reused), and
// inference runs. The message leaves carrying this stage's outputs.
void process(PipelineStage& stage, PipelineMessage& message, const std::vector<TensorView>& inputs,
             const std::function<void()>& inputs_consumed = {});

// Gathers finished requests in completion order and tells the breaker their outcome. Not
// thread-safe: one thread at a time completes requests.
class Collector {
 public:
  // Reads the text check's files when the spec has one (throws infermark::Error naming them).
  Collector(const PipelineSpec& spec, CircuitBreaker& breaker);
  // Keeps the last outputs; a timed request is recorded and told to the breaker, a warm-up one
  // not; a timed request that completed has its recognised text checked, where the spec asks.
  void complete(PipelineMessage& message, bool timed);
  std::vector<RequestRecord>& records() { return records_; }
  std::vector<Tensor>& last_outputs() { return last_outputs_; }
  std::uint32_t last_sample() const { return last_sample_; }
  std::optional<result::TextCheckRecord> text_check() const;

 private:
  const PipelineSpec& spec_;
  CircuitBreaker& breaker_;
  std::vector<RequestRecord> records_;
  std::vector<Tensor> last_outputs_;
  std::uint32_t last_sample_ = 0;
  std::optional<TextChecker> text_;
  std::string text_error_;  // the first request the check could not judge
};

}  // namespace infermark::pipeline

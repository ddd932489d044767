// One request travelling through a pipeline: its timestamps at every stage and the tensors the
// last stage produced. Within a process it is moved from queue to queue; between processes it is
// encoded into a shared-memory slot, and the next stage reads the tensors there as views.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace infermark::pipeline {

inline constexpr int kMaxStages = 8;

// Monotonic-clock times (CLOCK_MONOTONIC is one clock for every process of the machine).
struct StageStamps {
  std::int64_t received_ns = 0;  // the stage took the request (queue wait ends)
  std::int64_t started_ns = 0;   // inputs bound, inference starts
  std::int64_t finished_ns = 0;  // inference done
  std::int64_t sent_ns = 0;      // outputs fetched (and cropped, behind a text-crops handoff), handed on
};

struct PipelineMessage {
  std::uint64_t request = 0;
  bool end_of_stream = false;    // no more requests: each stage forwards it and stops
  std::int64_t admitted_ns = 0;  // stage 1 took the request: the end-to-end clock starts
  std::int64_t timeout_ns = 0;   // the request's time limit; 0 = none (warm-up, or no timeout)
  std::int64_t deadline_ns = 0;  // admitted + timeout, set by stage 1; 0 = none
  int dropped_at_stage = -1;     // the stage that found the deadline passed; -1 = not dropped
  std::uint32_t sample = 0;      // the sample of stage 1's input files the request carries
  std::int32_t text_lines = 0;   // text-crops handoff: lines the detector handed on
  std::array<StageStamps, kMaxStages> stamps{};
  std::vector<Tensor> tensors;  // outputs of the last stage that ran
};

// A tensor whose bytes live elsewhere (in a message or a shared-memory slot).
struct TensorView {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;
};

std::vector<TensorView> views_of(const std::vector<Tensor>& tensors);

// Bytes encode() needs for `message`.
std::size_t encoded_size(const PipelineMessage& message);
// Writes `message` into `slot`; throws infermark::Error when it does not fit.
std::size_t encode(const PipelineMessage& message, std::span<std::byte> slot);
// The message in `slot` without its tensors, and views of the tensors (valid while the slot is).
PipelineMessage decode(std::span<const std::byte> slot, std::vector<TensorView>& tensors);

}  // namespace infermark::pipeline

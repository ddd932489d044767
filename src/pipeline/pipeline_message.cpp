#include "pipeline/pipeline_message.hpp"

#include <cstring>

#include "core/error.hpp"

namespace infermark::pipeline {
namespace {

// Fixed part of an encoded message; tensors follow, each a TensorHeader, its name, its shape and
// its data.
struct MessageHeader {
  std::uint64_t request;
  std::int64_t admitted_ns, timeout_ns, deadline_ns;
  std::int32_t end_of_stream, dropped_at_stage;
  std::uint32_t sample;
  std::int32_t text_lines;
  std::array<StageStamps, kMaxStages> stamps;
  std::uint32_t tensor_count;
};

struct TensorHeader {
  std::uint32_t name_bytes, dtype, rank;
  std::uint64_t data_bytes;
};

class Writer {
 public:
  explicit Writer(std::span<std::byte> out) : out_(out) {}
  void put(const void* data, std::size_t bytes) {
    if (at_ + bytes > out_.size())
      throw Error("pipeline message does not fit its shared-memory slot (" + std::to_string(out_.size()) + " bytes)");
    if (bytes) std::memcpy(out_.data() + at_, data, bytes);
    at_ += bytes;
  }
  std::size_t written() const { return at_; }

 private:
  std::span<std::byte> out_;
  std::size_t at_ = 0;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  std::span<const std::byte> take(std::size_t bytes) {
    if (at_ + bytes > in_.size()) throw Error("pipeline message truncated in its shared-memory slot");
    auto part = in_.subspan(at_, bytes);
    at_ += bytes;
    return part;
  }
  template <typename T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<TensorView> views_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorView> views;
  for (const auto& t : tensors) views.push_back({t.name, t.dtype, t.shape, {t.data.data(), t.data.size()}});
  return views;
}

std::size_t encoded_size(const PipelineMessage& message) {
  std::size_t bytes = sizeof(MessageHeader);
  for (const auto& t : message.tensors)
    bytes += sizeof(TensorHeader) + t.name.size() + t.shape.size() * sizeof(std::int64_t) + t.data.size();
  return bytes;
}

std::size_t encode(const PipelineMessage& message, std::span<std::byte> slot) {
  Writer out(slot);
  const MessageHeader header{message.request,
                             message.admitted_ns,
                             message.timeout_ns,
                             message.deadline_ns,
                             message.end_of_stream ? 1 : 0,
                             message.dropped_at_stage,
                             message.sample,
                             message.text_lines,
                             message.stamps,
                             static_cast<std::uint32_t>(message.tensors.size())};
  out.put(&header, sizeof header);
  for (const auto& t : message.tensors) {
    const TensorHeader th{static_cast<std::uint32_t>(t.name.size()), static_cast<std::uint32_t>(t.dtype),
                          static_cast<std::uint32_t>(t.shape.size()), t.data.size()};
    out.put(&th, sizeof th);
    out.put(t.name.data(), t.name.size());
    out.put(t.shape.data(), t.shape.size() * sizeof(std::int64_t));
    out.put(t.data.data(), t.data.size());
  }
  return out.written();
}

PipelineMessage decode(std::span<const std::byte> slot, std::vector<TensorView>& tensors) {
  Reader in(slot);
  const auto header = in.get<MessageHeader>();
  PipelineMessage message;
  message.request = header.request;
  message.admitted_ns = header.admitted_ns;
  message.timeout_ns = header.timeout_ns;
  message.deadline_ns = header.deadline_ns;
  message.end_of_stream = header.end_of_stream != 0;
  message.dropped_at_stage = header.dropped_at_stage;
  message.sample = header.sample;
  message.text_lines = header.text_lines;
  message.stamps = header.stamps;
  tensors.clear();
  for (std::uint32_t i = 0; i < header.tensor_count; ++i) {
    const auto th = in.get<TensorHeader>();
    TensorView view;
    const auto name = in.take(th.name_bytes);
    view.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    view.dtype = static_cast<DType>(th.dtype);
    view.shape.resize(th.rank);
    const auto shape = in.take(th.rank * sizeof(std::int64_t));
    if (th.rank) std::memcpy(view.shape.data(), shape.data(), shape.size());
    view.data = in.take(th.data_bytes);
    tensors.push_back(std::move(view));
  }
  return message;
}

}  // namespace infermark::pipeline

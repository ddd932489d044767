// The pipeline's hand-over machinery: the in-process bounded queue, the message encoding and the
// shared-memory ring between processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "pipeline/bounded_queue.hpp"
#include "pipeline/pipeline_message.hpp"
#include "pipeline/shm_ring.hpp"

namespace infermark::pipeline {
namespace {

Tensor float_tensor(const std::string& name, std::vector<std::int64_t> shape, float first) {
  Tensor t{name, DType::kFloat32, shape, {}};
  t.data.resize(element_count(shape) * sizeof(float));
  for (std::size_t i = 0; i < t.element_count(); ++i) t.as<float>()[i] = first + static_cast<float>(i);
  return t;
}

std::string unique_ring(const std::string& what) { return "/infermark-test-" + std::to_string(getpid()) + "-" + what; }

}  // namespace

TEST(BoundedQueue, KeepsOrderAcrossThreadsAndNeverExceedsItsCapacity) {
  BoundedQueue<int> queue(3);
  std::atomic<std::size_t> largest{0};
  std::thread producer([&] {
    for (int i = 0; i < 2000; ++i) {
      int item = i;
      ASSERT_TRUE(queue.push(item));
      largest = std::max(largest.load(), queue.size());
    }
    queue.close();
  });
  int expected = 0;
  while (auto item = queue.pop()) EXPECT_EQ(*item, expected++);
  producer.join();
  EXPECT_EQ(expected, 2000);
  EXPECT_LE(largest.load(), 3u);
}

TEST(BoundedQueue, AFullQueueHoldsItsProducerUntilAnItemIsTaken) {
  BoundedQueue<int> queue(1);
  int first = 1, second = 2;
  ASSERT_TRUE(queue.push(first));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    queue.push(second);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(pushed.load());  // still blocked: the queue is full
  EXPECT_EQ(queue.pop(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(queue.pop(), 2);
}

TEST(BoundedQueue, MovesTensorsWithoutCopyingTheirData) {
  BoundedQueue<PipelineMessage> queue(2);
  PipelineMessage message;
  message.tensors.push_back(float_tensor("features", {1, 2048}, 0));
  const auto* buffer = message.tensors[0].data.data();
  ASSERT_TRUE(queue.push(message));
  const auto out = queue.pop();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->tensors[0].data.data(), buffer);  // the same buffer changed hands
}

TEST(BoundedQueue, CloseDrainsWhatIsLeftThenEnds) {
  BoundedQueue<int> queue(2);
  int a = 7;
  ASSERT_TRUE(queue.push(a));
  queue.close();
  int b = 8;
  EXPECT_FALSE(queue.push(b));
  EXPECT_EQ(queue.pop(), 7);
  EXPECT_FALSE(queue.pop().has_value());
  EXPECT_THROW(BoundedQueue<int>(0), std::invalid_argument);
}

TEST(PipelineMessage, EncodesAndDecodesStampsAndTensorsAsViews) {
  PipelineMessage message;
  message.request = 41;
  message.admitted_ns = 1000;
  message.timeout_ns = 5;
  message.deadline_ns = 1005;
  message.dropped_at_stage = 1;
  message.stamps[1].sent_ns = 77;
  message.tensors = {float_tensor("features", {1, 4}, 1.5f), float_tensor("mask", {2}, -3)};
  std::vector<std::byte> slot(encoded_size(message));
  EXPECT_EQ(encode(message, slot), slot.size());
  std::vector<TensorView> views;
  const auto decoded = decode(slot, views);
  EXPECT_EQ(decoded.request, 41u);
  EXPECT_EQ(decoded.admitted_ns, 1000);
  EXPECT_EQ(decoded.timeout_ns, 5);
  EXPECT_EQ(decoded.deadline_ns, 1005);
  EXPECT_EQ(decoded.dropped_at_stage, 1);
  EXPECT_FALSE(decoded.end_of_stream);
  EXPECT_EQ(decoded.stamps[1].sent_ns, 77);
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].name, "features");
  EXPECT_EQ(views[1].shape, std::vector<std::int64_t>{2});
  for (std::size_t t = 0; t < 2; ++t) {
    ASSERT_EQ(views[t].data.size(), message.tensors[t].data.size());
    EXPECT_EQ(std::memcmp(views[t].data.data(), message.tensors[t].data.data(), views[t].data.size()), 0);
    EXPECT_GE(views[t].data.data(), slot.data());  // read in place, inside the slot
    EXPECT_LT(views[t].data.data(), slot.data() + slot.size());
  }
}

TEST(PipelineMessage, ASlotTooSmallIsAnError) {
  PipelineMessage message;
  message.tensors = {float_tensor("features", {1, 64}, 0)};
  std::vector<std::byte> slot(encoded_size(message) - 1);
  EXPECT_THROW(encode(message, slot), Error);
}

TEST(ShmRing, CarriesMessagesInOrderToAnotherProcess) {
  const auto name = unique_ring("order");
  auto ring = ShmRing::create(name, 2, 256);
  EXPECT_EQ(ring->capacity(), 2u);
  constexpr int kMessages = 200;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the consumer: exit code 0 only if every message arrived, in order, intact
    auto reader = ShmRing::open(name, 5, {});
    for (int i = 0; i < kMessages; ++i) {
      auto slot = reader->begin_read();
      if (!slot || slot->size() != sizeof(int)) _exit(1);
      int value = 0;
      std::memcpy(&value, slot->data(), sizeof value);
      reader->end_read();
      if (value != i) _exit(2);
    }
    _exit(reader->begin_read() ? 3 : 0);  // closed and drained
  }
  for (int i = 0; i < kMessages; ++i) {
    auto slot = ring->begin_write();
    ASSERT_TRUE(slot);
    std::memcpy(slot->data(), &i, sizeof i);
    ring->end_write(sizeof i);
    ASSERT_LE(ring->size(), 2u);
  }
  ring->close();
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ShmRing, AFullRingBlocksItsProducerUntilAborted) {
  auto ring = ShmRing::create(unique_ring("full"), 1, 16);
  ASSERT_TRUE(ring->begin_write());
  ring->end_write(4);
  std::atomic<bool> give_up{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    give_up = true;
  });
  EXPECT_FALSE(ring->begin_write([&] { return give_up.load(); }).has_value());
  stopper.join();
  ASSERT_TRUE(ring->begin_read());  // the message written before is still there
  ring->end_read();
  EXPECT_TRUE(ring->begin_write());
}

TEST(ShmRing, OpeningARingNobodyCreatedNamesItAndTimesOut) {
  const auto name = unique_ring("missing");
  try {
    ShmRing::open(name, 0.05, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(ShmRing, TheCreatorRemovesTheSegment) {
  const auto name = unique_ring("unlink");
  { auto ring = ShmRing::create(name, 2, 64); }
  EXPECT_FALSE(std::filesystem::exists("/dev/shm" + name));
}

// A pipeline killed with SIGKILL unlinks none of its rings (its workers die with it): the next run
// removes the rings of runs whose process is gone, and leaves a live run's alone.
TEST(ShmRingCleanup, RingsOfADeadRunAreRemovedALiveRunsKept) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // reaped: its pid names no process now
  const auto make = [](const std::string& name) {
    const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  };
  const auto dead = pipeline_ring_name(child, 0), live = pipeline_ring_name(getpid(), 7);
  make(dead);
  make(live);
  EXPECT_GE(remove_orphaned_pipeline_rings(), 1);
  EXPECT_FALSE(std::filesystem::exists("/dev/shm" + dead));
  EXPECT_TRUE(std::filesystem::exists("/dev/shm" + live));
  shm_unlink(live.c_str());
}

}  // namespace infermark::pipeline

// A single-producer, single-consumer ring of fixed-size slots in POSIX shared memory (/dev/shm),
// for handing tensors between stage processes: the producer encodes straight into a slot, the
// consumer reads it in place. Its capacity is the pipeline's queue depth; a full ring blocks
// the producer. A process-shared robust mutex and condition variables do the waiting, in short
// timed slices so a caller can give up when a peer died or the user stopped the run.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace infermark::pipeline {

// Returns true when a blocked wait should give up (peer gone, user stop).
using AbortCheck = std::function<bool()>;

class ShmRing {
 public:
  // Creates (replacing any stale one) and owns `name` ("/infermark-..."): unlinked on destruction.
  // Throws infermark::Error naming the segment and the cause.
  static std::unique_ptr<ShmRing> create(const std::string& name, std::size_t capacity, std::size_t slot_bytes);
  // Maps a ring another process created, waiting up to `wait_s` for it to appear. Throws
  // infermark::Error on timeout or abort.
  static std::unique_ptr<ShmRing> open(const std::string& name, double wait_s, const AbortCheck& abort);
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  // Producer: waits for a free slot; nullopt when the ring was closed or `abort` said so.
  std::optional<std::span<std::byte>> begin_write(const AbortCheck& abort = {});
  void end_write(std::size_t bytes);
  // Consumer: waits for a filled slot; nullopt when closed and empty, or aborted.
  std::optional<std::span<const std::byte>> begin_read(const AbortCheck& abort = {});
  void end_read();
  // Wakes both sides: writes fail from now on, reads drain what is left.
  void close();

  const std::string& name() const { return name_; }
  std::size_t capacity() const;
  std::size_t slot_bytes() const;
  std::size_t size() const;  // filled slots

  struct Header;  // the shared control block at the start of the segment

 private:
  ShmRing(std::string name, void* base, std::size_t mapped_bytes, bool owner);
  std::byte* slot(std::size_t index) const;

  std::string name_;
  void* base_;
  std::size_t mapped_bytes_;
  bool owner_;
  Header* header_;
};

// Bytes of shared memory a ring of `capacity` slots of `slot_bytes` takes.
std::size_t ring_bytes(std::size_t capacity, std::size_t slot_bytes);

// The name of ring `index` of the pipeline run by process `owner_pid`: "/<prefix><pid>-<index>".
std::string pipeline_ring_name(int owner_pid, int index);

// Removes the rings of pipeline runs whose process is gone (a run killed with SIGKILL unlinks
// nothing: its stage workers die with it, and their rings would stay in `shm_dir` until reboot).
// Returns how many were removed. Rings of live processes are left alone.
int remove_orphaned_pipeline_rings(const std::string& shm_dir = "/dev/shm");

}  // namespace infermark::pipeline

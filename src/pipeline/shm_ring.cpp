#include "pipeline/shm_ring.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <thread>

#include "core/error.hpp"

namespace infermark::pipeline {

struct ShmRing::Header {
  std::atomic<std::uint64_t> magic;  // set last: a reader never maps a half-initialised ring
  std::uint64_t capacity;
  std::uint64_t slot_bytes;
  pthread_mutex_t mutex;
  pthread_cond_t not_empty, not_full;
  std::uint64_t head;   // next slot to read
  std::uint64_t count;  // filled slots
  std::uint32_t closed;
};

namespace {

constexpr std::uint64_t kMagic = 0x696e666d72696e67;  // "infmring"
constexpr std::size_t kAlign = 64;
constexpr long kWaitSliceNs = 50'000'000;  // how often a blocked wait checks its abort condition

std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
std::size_t slot_stride(std::size_t slot_bytes) { return aligned(sizeof(std::uint64_t) + slot_bytes); }

std::string cause() { return std::strerror(errno); }

void check(int rc, const std::string& what, const std::string& name) {
  if (rc != 0) throw Error("shared-memory ring " + name + ": " + what + " failed: " + std::strerror(rc));
}

// A robust mutex: if a stage process died holding it, the next locker repairs it.
class Lock {
 public:
  explicit Lock(pthread_mutex_t* mutex) : mutex_(mutex) {
    if (pthread_mutex_lock(mutex_) == EOWNERDEAD) pthread_mutex_consistent(mutex_);
  }
  ~Lock() { pthread_mutex_unlock(mutex_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

// Waits on `cond` for at most one slice; the caller re-checks its predicate and abort.
void wait_slice(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += kWaitSliceNs;
  if (until.tv_nsec >= 1'000'000'000) {
    until.tv_nsec -= 1'000'000'000;
    ++until.tv_sec;
  }
  if (pthread_cond_timedwait(cond, mutex, &until) == EOWNERDEAD) pthread_mutex_consistent(mutex);
}

}  // namespace

std::size_t ring_bytes(std::size_t capacity, std::size_t slot_bytes) {
  return aligned(sizeof(ShmRing::Header)) + capacity * slot_stride(slot_bytes);
}

ShmRing::ShmRing(std::string name, void* base, std::size_t mapped_bytes, bool owner)
    : name_(std::move(name)), base_(base), mapped_bytes_(mapped_bytes), owner_(owner), header_(static_cast<Header*>(base)) {}

ShmRing::~ShmRing() {
  munmap(base_, mapped_bytes_);
  if (owner_) shm_unlink(name_.c_str());
}

std::unique_ptr<ShmRing> ShmRing::create(const std::string& name, std::size_t capacity, std::size_t slot_bytes) {
  if (capacity == 0) throw Error("shared-memory ring " + name + ": capacity must be at least 1");
  shm_unlink(name.c_str());  // a stale segment of a crashed run
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw Error("shared-memory ring " + name + ": shm_open failed: " + cause());
  const auto bytes = ring_bytes(capacity, slot_bytes);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const auto why = cause();
    ::close(fd);
    shm_unlink(name.c_str());
    throw Error("shared-memory ring " + name + ": cannot size it to " + std::to_string(bytes) + " bytes: " + why);
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(name.c_str());
    throw Error("shared-memory ring " + name + ": mmap failed: " + cause());
  }
  std::unique_ptr<ShmRing> ring(new ShmRing(name, base, bytes, true));
  auto* h = ring->header_;
  h->capacity = capacity;
  h->slot_bytes = slot_bytes;
  h->head = h->count = 0;
  h->closed = 0;
  pthread_mutexattr_t mutex_attr;
  pthread_mutexattr_init(&mutex_attr);
  pthread_mutexattr_setpshared(&mutex_attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&mutex_attr, PTHREAD_MUTEX_ROBUST);
  check(pthread_mutex_init(&h->mutex, &mutex_attr), "pthread_mutex_init", name);
  pthread_mutexattr_destroy(&mutex_attr);
  pthread_condattr_t cond_attr;
  pthread_condattr_init(&cond_attr);
  pthread_condattr_setpshared(&cond_attr, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&cond_attr, CLOCK_MONOTONIC);
  check(pthread_cond_init(&h->not_empty, &cond_attr), "pthread_cond_init", name);
  check(pthread_cond_init(&h->not_full, &cond_attr), "pthread_cond_init", name);
  pthread_condattr_destroy(&cond_attr);
  h->magic.store(kMagic, std::memory_order_release);
  return ring;
}

std::unique_ptr<ShmRing> ShmRing::open(const std::string& name, double wait_s, const AbortCheck& abort) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (true) {
    const int fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd >= 0) {
      struct stat st {};
      if (fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= sizeof(Header)) {
        const auto bytes = static_cast<std::size_t>(st.st_size);
        void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        if (base == MAP_FAILED) throw Error("shared-memory ring " + name + ": mmap failed: " + cause());
        std::unique_ptr<ShmRing> ring(new ShmRing(name, base, bytes, false));
        if (ring->header_->magic.load(std::memory_order_acquire) == kMagic) return ring;
      } else {
        ::close(fd);
      }
    }
    if (abort && abort()) throw Error("shared-memory ring " + name + ": stopped while waiting for it");
    if (std::chrono::steady_clock::now() > give_up)
      throw Error("shared-memory ring " + name + ": not created within " + std::to_string(wait_s) +
                  " s (the producing stage did not start)");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::byte* ShmRing::slot(std::size_t index) const {
  return static_cast<std::byte*>(base_) + aligned(sizeof(Header)) + index * slot_stride(header_->slot_bytes);
}

std::optional<std::span<std::byte>> ShmRing::begin_write(const AbortCheck& abort) {
  Lock lock(&header_->mutex);
  while (!header_->closed && header_->count == header_->capacity) {
    if (abort && abort()) return std::nullopt;
    wait_slice(&header_->not_full, &header_->mutex);
  }
  if (header_->closed) return std::nullopt;
  // Single producer: the slot after the filled ones stays ours until end_write publishes it.
  auto* s = slot((header_->head + header_->count) % header_->capacity);
  return std::span<std::byte>(s + sizeof(std::uint64_t), header_->slot_bytes);
}

void ShmRing::end_write(std::size_t bytes) {
  Lock lock(&header_->mutex);
  auto* s = slot((header_->head + header_->count) % header_->capacity);
  const std::uint64_t length = bytes;
  std::memcpy(s, &length, sizeof length);
  ++header_->count;
  pthread_cond_signal(&header_->not_empty);
}

std::optional<std::span<const std::byte>> ShmRing::begin_read(const AbortCheck& abort) {
  Lock lock(&header_->mutex);
  while (header_->count == 0) {
    if (header_->closed || (abort && abort())) return std::nullopt;
    wait_slice(&header_->not_empty, &header_->mutex);
  }
  const auto* s = slot(header_->head);
  std::uint64_t length = 0;
  std::memcpy(&length, s, sizeof length);
  return std::span<const std::byte>(s + sizeof(std::uint64_t), length);
}

void ShmRing::end_read() {
  Lock lock(&header_->mutex);
  header_->head = (header_->head + 1) % header_->capacity;
  --header_->count;
  pthread_cond_signal(&header_->not_full);
}

void ShmRing::close() {
  Lock lock(&header_->mutex);
  header_->closed = 1;
  pthread_cond_broadcast(&header_->not_full);
  pthread_cond_broadcast(&header_->not_empty);
}

std::size_t ShmRing::capacity() const { return header_->capacity; }
std::size_t ShmRing::slot_bytes() const { return header_->slot_bytes; }
std::size_t ShmRing::size() const {
  Lock lock(&header_->mutex);
  return header_->count;
}

namespace {
constexpr std::string_view kPipelineRingPrefix = "infermark-pipeline-";
}  // namespace

std::string pipeline_ring_name(int owner_pid, int index) {
  return "/" + std::string(kPipelineRingPrefix) + std::to_string(owner_pid) + "-" + std::to_string(index);
}

int remove_orphaned_pipeline_rings(const std::string& shm_dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(shm_dir, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.starts_with(kPipelineRingPrefix)) continue;
    const auto pid_text =
        name.substr(kPipelineRingPrefix.size(), name.find('-', kPipelineRingPrefix.size()) - kPipelineRingPrefix.size());
    int pid = 0;
    try {
      pid = std::stoi(pid_text);
    } catch (const std::exception&) {
      continue;  // not a name this module writes
    }
    if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    if (std::filesystem::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace infermark::pipeline

// The two calls of ExecuTorch's thread pool this backend makes. The executorch wheel ships
// libexecutorch_threadpool.so but not its header (extension/threadpool/threadpool.h), so they are
// declared here as that library (ExecuTorch 1.5.1) defines them; the linker resolves them by
// their mangled names, so a library that changed their parameters would not link.
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch::extension::threadpool {

class ThreadPool final {
 public:
  ThreadPool() = delete;
  // The pool's worker count, the calling thread included.
  std::size_t get_thread_count() const;
  // Replaces the pool's workers with `num_threads`; false if it could not.
  bool _unsafe_reset_threadpool(std::uint32_t num_threads);  // NOLINT(readability-identifier-naming): the library's name
};

// The process's pool, made on first use (the XNNPACK delegate runs on it).
ThreadPool* get_threadpool();

}  // namespace executorch::extension::threadpool

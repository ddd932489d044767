// The C entry point each backend shared library exports. The ABI version changes whenever
// backend.hpp changes incompatibly, so a stale plugin is refused instead of crashing.
#pragma once

#include "backends/backend.hpp"

#define INFERMARK_BACKEND_ABI_VERSION 8

extern "C" {
struct InfermarkBackendEntry {
  int abi_version;
  infermark::Backend* (*create)();
};
}

// Defines the entry symbol for a backend class with a default constructor.
#define INFERMARK_DEFINE_BACKEND(BackendClass)                                                          \
  extern "C" __attribute__((visibility("default"))) InfermarkBackendEntry infermark_backend_entry() {   \
    return {INFERMARK_BACKEND_ABI_VERSION, []() -> infermark::Backend* { return new BackendClass(); }}; \
  }

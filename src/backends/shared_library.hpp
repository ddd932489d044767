// What the backends that dlopen a framework's C API (TfLite, LiteRT, ONNX Runtime GenAI) share: resolving a function
// with an error naming the library, and opening a library once per process.
#pragma once

#include <dlfcn.h>

#include <exception>
#include <string>

#include "core/error.hpp"

namespace infermark::shared_library {

// `library_kind` names the library in the error, e.g. "TfLite C library".
template <typename Function>
void resolve(void* handle, const std::string& library_kind, const std::string& library, const char* symbol, Function& target) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) throw Error(library_kind + " " + library + " does not export " + symbol);
  target = reinterpret_cast<Function>(address);
}

// The Api that open() returns, built on the first call; its infermark::Error is rethrown on every
// call. One per Open type (each caller passes its own lambda).
template <typename Api, typename Open>
const Api& open_once(Open open) {
  struct Loaded {
    Api api;
    std::exception_ptr failure;
  };
  static const Loaded loaded = [&] {
    Loaded result;
    try {
      result.api = open();
    } catch (const Error&) {
      result.failure = std::current_exception();
    }
    return result;
  }();
  if (loaded.failure) std::rethrow_exception(loaded.failure);
  return loaded.api;
}

}  // namespace infermark::shared_library

// A CPython interpreter inside the backend's process, for a framework whose only runtime the
// registries offer is reached through Python (TFLite: LiteRT's interpreter in ai-edge-litert).
// Owning references, GIL scopes and Python exceptions turned into infermark::Error.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>
#include <utility>

namespace infermark::python {

// Starts the interpreter once per process on the venv whose `bin/python` is given (its
// site-packages, and the system's when the venv was made with --system-site-packages), then
// releases the GIL. Never finalised: extension modules cannot be unloaded safely.
// Throws infermark::Error when Python cannot start.
void ensure_started(const std::string& venv_python);

// Holds the GIL for its scope; any thread may take it.
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// An owned (strong) reference; take the GIL before creating, copying or destroying one.
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* owned) : p_(owned) {}
  Ref(const Ref& other) : p_(other.p_) { Py_XINCREF(p_); }
  Ref(Ref&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  Ref& operator=(Ref other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~Ref() { Py_XDECREF(p_); }
  PyObject* get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

// The pending Python exception as text ("ValueError: ..."), clearing it; "" when none is set.
std::string take_error();

// `result` when it is non-null; otherwise throws infermark::Error "<context>: <Python error>".
Ref check(PyObject* result, const std::string& context);

Ref import(const char* module);
Ref attr(const Ref& object, const char* name);
Ref str(const std::string& text);
std::string to_string(const Ref& object);  // str(object)
long long to_int(const Ref& object);

}  // namespace infermark::python

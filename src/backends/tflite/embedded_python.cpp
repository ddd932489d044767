#include "backends/tflite/embedded_python.hpp"

#include <dlfcn.h>

#include <mutex>

#include "core/error.hpp"

namespace infermark::python {
namespace {

// The backend plugin is loaded RTLD_LOCAL, so libpython's symbols would stay hidden from the
// extension modules Python imports later (numpy, LiteRT's wrappers); make them global.
void export_libpython_symbols() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &info) == 0 || info.dli_fname == nullptr)
    throw Error("tflite: cannot locate the loaded libpython");
  if (dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr)
    throw Error(std::string("tflite: cannot make libpython's symbols global: ") + dlerror());
}

void start(const std::string& venv_python) {
  export_libpython_symbols();
  if (Py_IsInitialized()) return;
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // Ctrl-C and the harness's signals stay infermark's
  config.parse_argv = 0;
  // Python finds the venv (pyvenv.cfg) from the executable's path, as if it had been run.
  PyStatus status = PyConfig_SetBytesString(&config, &config.executable, venv_python.c_str());
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status))
    throw Error("tflite: cannot start Python from " + venv_python + ": " + (status.err_msg ? status.err_msg : "unknown error"));
  PyEval_SaveThread();  // release the GIL; every call takes it through Gil
}

}  // namespace

void ensure_started(const std::string& venv_python) {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [&] {
    try {
      start(venv_python);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
}

std::string take_error() {
  if (!PyErr_Occurred()) return "";
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  Ref type_ref(type), value_ref(value), traceback_ref(traceback);
  std::string text = type ? reinterpret_cast<PyTypeObject*>(type)->tp_name : "error";
  if (value) {
    Ref message(PyObject_Str(value));
    const char* utf8 = message ? PyUnicode_AsUTF8(message.get()) : nullptr;
    if (utf8 && *utf8) text += std::string(": ") + utf8;
  }
  PyErr_Clear();
  return text;
}

Ref check(PyObject* result, const std::string& context) {
  if (result == nullptr) throw Error(context + ": " + take_error());
  return Ref(result);
}

Ref import(const char* module) { return check(PyImport_ImportModule(module), std::string("import ") + module); }

Ref attr(const Ref& object, const char* name) {
  return check(PyObject_GetAttrString(object.get(), name), std::string("attribute ") + name);
}

Ref str(const std::string& text) {
  return check(PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size())), "str");
}

std::string to_string(const Ref& object) {
  Ref text = check(PyObject_Str(object.get()), "str()");
  const char* utf8 = PyUnicode_AsUTF8(text.get());
  if (utf8 == nullptr) throw Error("str(): " + take_error());
  return utf8;
}

long long to_int(const Ref& object) {
  const long long value = PyLong_AsLongLong(object.get());
  if (value == -1 && PyErr_Occurred()) throw Error("int(): " + take_error());
  return value;
}

}  // namespace infermark::python

// TFLite through LiteRT's Python API (ai-edge-litert) in an embedded CPython: the tflite backend's
// runtime=python. Every timed run() is one Python call into the interpreter's Invoke, which
// releases the GIL while it computes; results say so.
#include "backends/tflite/tflite_python_session.hpp"

#include <algorithm>
#include <cstring>

#include "backends/options.hpp"
#include "backends/tflite/embedded_python.hpp"
#include "backends/tflite/tflite_settings.hpp"
#include "core/error.hpp"

namespace infermark {
namespace {

namespace py = python;

constexpr const char* kRuntimeApi =
    "LiteRT's Python API (ai-edge-litert) in an embedded CPython; each timed inference includes one Python call";

void start_python() { py::ensure_started(INFERMARK_TFLITE_PYTHON); }

std::vector<std::int64_t> to_shape(const py::Ref& sequence) {
  py::Ref list = py::check(PySequence_List(sequence.get()), "shape");
  std::vector<std::int64_t> shape;
  for (Py_ssize_t i = 0; i < PyList_Size(list.get()); ++i)
    shape.push_back(py::to_int(py::check(PyNumber_Long(PyList_GetItem(list.get(), i)), "shape")));
  return shape;
}

py::Ref item(const py::Ref& dict, const char* key) {
  PyObject* value = PyDict_GetItemString(dict.get(), key);  // borrowed
  if (value == nullptr) throw Error(std::string("tensor details lack '") + key + "'");
  return py::Ref(Py_NewRef(value));
}

// One tensor of get_input_details()/get_output_details(): its spec and interpreter index.
struct TensorDetail {
  TensorSpec spec;
  long long index = 0;
};

std::vector<TensorDetail> tensor_details(const py::Ref& interpreter, const char* method) {
  py::Ref details = py::check(PyObject_CallMethod(interpreter.get(), method, nullptr), method);
  py::Ref numpy = py::import("numpy");
  std::vector<TensorDetail> result;
  for (Py_ssize_t i = 0; i < PyList_Size(details.get()); ++i) {
    py::Ref detail(Py_NewRef(PyList_GetItem(details.get(), i)));
    TensorDetail t;
    t.spec.name = py::to_string(item(detail, "name"));
    t.index = py::to_int(item(detail, "index"));
    t.spec.shape = to_shape(item(detail, "shape_signature"));  // -1 where the model allows any size
    py::Ref dtype = py::check(PyObject_CallMethod(numpy.get(), "dtype", "O", item(detail, "dtype").get()), "dtype");
    const auto dtype_name = py::to_string(py::attr(dtype, "name"));
    try {
      t.spec.dtype = parse_dtype(dtype_name);
    } catch (const Error&) {
      throw Error("tensor '" + t.spec.name + "' has element type " + dtype_name + ", which infermark cannot feed");
    }
    t.spec.dim_names.resize(t.spec.shape.size());
    result.push_back(std::move(t));
  }
  return result;
}

class TflitePythonSession final : public Session {
 public:
  TflitePythonSession(const std::filesystem::path& model, const SessionOptions& options, bool xnnpack)
      : model_(model), options_(options), xnnpack_(xnnpack) {
    start_python();
    try {
      py::Gil gil;
      load();
    } catch (...) {
      release_python_objects();  // the members die next, and Python objects may only die under the GIL
      throw;
    }
  }

  ~TflitePythonSession() override { release_python_objects(); }

  const std::vector<TensorSpec>& input_specs() const override { return input_specs_; }
  const std::vector<TensorSpec>& output_specs() const override { return output_specs_; }

  void set_inputs(const std::vector<Tensor>& inputs, int slots) override {
    if (slots < 1 || slots > max_slots()) throw Error("tflite: " + std::to_string(slots) + " request slots requested");
    py::Gil gil;
    if (!numpy_frombuffer_) numpy_frombuffer_ = py::attr(py::import("numpy"), "frombuffer");
    while (static_cast<int>(slots_.size()) < slots) slots_.push_back(make_slot());
    slots_.resize(static_cast<std::size_t>(slots));
    for (auto& slot : slots_) bind(slot, inputs);
  }

  // One interpreter per slot (an interpreter is not thread-safe); Invoke releases the GIL, so
  // slots compute in parallel and only the call itself is serialised.
  void run(int slot) override {
    py::Gil gil;
    py::check(PyObject_CallNoArgs(slots_[static_cast<std::size_t>(slot)].invoke.get()), "tflite: invoke on " + model_.string());
  }
  int max_slots() const override { return 64; }

  std::vector<Tensor> outputs() override {
    py::Gil gil;
    std::vector<Tensor> result;
    for (const auto& t : outputs_) {
      py::Ref array = py::check(PyObject_CallMethod(slots_.at(0).interpreter.get(), "get_tensor", "L", t.index), "get_tensor");
      py::Ref bytes = py::check(PyObject_CallMethod(array.get(), "tobytes", nullptr), "tobytes");
      Tensor tensor{t.spec.name, t.spec.dtype, to_shape(py::attr(array, "shape")), {}};
      tensor.data.resize(static_cast<std::size_t>(PyBytes_Size(bytes.get())));
      std::memcpy(tensor.data.data(), PyBytes_AsString(bytes.get()), tensor.data.size());
      result.push_back(std::move(tensor));
    }
    return result;
  }

  std::string library_version() const override { return tflite_python_runtime(); }

  std::vector<EffectiveSetting> effective_settings() const override {
    const int threads = options_.intra_op_threads;
    const bool delegated = delegate_nodes_ > 0;
    std::string xnnpack_effective = "off";
    if (delegated) xnnpack_effective = "on (" + std::to_string(delegate_nodes_) + " delegated partition(s))";
    auto settings = tflite_settings::common(options_, tflite_settings::Runtime::kPythonApi);
    settings.push_back({"runtime_api", "", kRuntimeApi, true, "the Python API was asked for (runtime=python)"});
    settings.push_back({"intra_op_threads", threads > 0 ? std::to_string(threads) : "",
                        threads > 0 ? std::to_string(threads) : "1 (the default of LiteRT's Python API)", true,
                        "the interpreter's num_threads, also used by the XNNPACK delegate"});
    settings.push_back({"xnnpack", option_or(options_.extras, "xnnpack", ""), xnnpack_effective, delegated == xnnpack_,
                        delegated == xnnpack_ ? "" : "the XNNPACK delegate took no operator of this model"});
    return settings;
  }

 private:
  struct Slot {
    py::Ref interpreter, invoke;
  };

  // Opens slot 0's interpreter and reads the tensor specs; the caller holds the GIL.
  void load() {
    py::Ref module = py::import("ai_edge_litert.interpreter");
    interpreter_class_ = py::attr(module, "Interpreter");
    resolver_ = py::attr(py::attr(module, "OpResolverType"), xnnpack_ ? "BUILTIN" : "BUILTIN_WITHOUT_DEFAULT_DELEGATES");
    slots_.push_back(make_slot());
    inputs_ = tensor_details(slots_[0].interpreter, "get_input_details");
    outputs_ = tensor_details(slots_[0].interpreter, "get_output_details");
    for (const auto& t : inputs_) input_specs_.push_back(t.spec);
    for (const auto& t : outputs_) output_specs_.push_back(t.spec);
    delegate_nodes_ = count_delegate_nodes(slots_[0].interpreter);
  }

  void release_python_objects() {
    py::Gil gil;
    slots_.clear();
    interpreter_class_ = resolver_ = numpy_frombuffer_ = py::Ref();
  }

  Slot make_slot() {
    py::Ref kwargs = py::check(PyDict_New(), "dict");
    PyDict_SetItemString(kwargs.get(), "model_path", py::str(model_.string()).get());
    if (options_.intra_op_threads > 0)
      PyDict_SetItemString(kwargs.get(), "num_threads", py::check(PyLong_FromLong(options_.intra_op_threads), "int").get());
    PyDict_SetItemString(kwargs.get(), "experimental_op_resolver_type", resolver_.get());
    py::Ref no_args = py::check(PyTuple_New(0), "tuple");
    Slot slot;
    slot.interpreter = py::check(PyObject_Call(interpreter_class_.get(), no_args.get(), kwargs.get()), "LiteRT interpreter");
    py::check(PyObject_CallMethod(slot.interpreter.get(), "allocate_tensors", nullptr), "allocate_tensors");
    slot.invoke = py::attr(slot.interpreter, "invoke");
    return slot;
  }

  // Resizes the interpreter's inputs to the bound shapes when they differ, then copies the data.
  void bind(Slot& slot, const std::vector<Tensor>& inputs) {
    if (inputs.size() != inputs_.size()) throw Error("tflite: the model takes " + std::to_string(inputs_.size()) + " inputs");
    bool resized = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      py::Ref current = py::check(PyObject_CallMethod(slot.interpreter.get(), "get_input_details", nullptr), "details");
      py::Ref detail(Py_NewRef(PyList_GetItem(current.get(), static_cast<Py_ssize_t>(i))));
      if (to_shape(item(detail, "shape")) == inputs[i].shape) continue;
      py::Ref shape = py::check(PyList_New(0), "list");
      for (auto d : inputs[i].shape) PyList_Append(shape.get(), py::check(PyLong_FromLongLong(d), "int").get());
      py::check(PyObject_CallMethod(slot.interpreter.get(), "resize_tensor_input", "LO", inputs_[i].index, shape.get()),
                "tflite: input '" + inputs_[i].spec.name + "' cannot take shape " + format_shape(inputs[i].shape));
      resized = true;
    }
    if (resized) py::check(PyObject_CallMethod(slot.interpreter.get(), "allocate_tensors", nullptr), "allocate_tensors");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].dtype != inputs_[i].spec.dtype)
        throw Error("tflite: input '" + inputs_[i].spec.name + "' is " + std::string(dtype_name(inputs_[i].spec.dtype)));
      py::Ref bytes = py::check(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(inputs[i].data.data()),
                                                          static_cast<Py_ssize_t>(inputs[i].data.size())),
                                "bytes");
      py::Ref flat = py::check(
          PyObject_CallFunction(numpy_frombuffer_.get(), "Os", bytes.get(), std::string(dtype_name(inputs[i].dtype)).c_str()),
          "numpy");
      py::Ref shape = py::check(PyTuple_New(static_cast<Py_ssize_t>(inputs[i].shape.size())), "tuple");
      for (std::size_t d = 0; d < inputs[i].shape.size(); ++d)
        PyTuple_SetItem(shape.get(), static_cast<Py_ssize_t>(d), PyLong_FromLongLong(inputs[i].shape[d]));  // steals
      py::Ref array = py::check(PyObject_CallMethod(flat.get(), "reshape", "O", shape.get()), "reshape");
      py::check(PyObject_CallMethod(slot.interpreter.get(), "set_tensor", "LO", inputs_[i].index, array.get()),
                "tflite: set_tensor '" + inputs_[i].spec.name + "'");
    }
  }

  // Nodes the default delegate (XNNPACK) replaced parts of the graph with, after allocation.
  static int count_delegate_nodes(const py::Ref& interpreter) {
    py::Ref ops = py::check(PyObject_CallMethod(interpreter.get(), "_get_ops_details", nullptr), "_get_ops_details");
    int count = 0;
    for (Py_ssize_t i = 0; i < PyList_Size(ops.get()); ++i) {
      py::Ref op(Py_NewRef(PyList_GetItem(ops.get(), i)));
      if (py::to_string(item(op, "op_name")) == "DELEGATE") ++count;
    }
    return count;
  }

  std::filesystem::path model_;
  SessionOptions options_;
  bool xnnpack_ = true;
  int delegate_nodes_ = 0;
  py::Ref interpreter_class_, resolver_, numpy_frombuffer_;
  std::vector<Slot> slots_;
  std::vector<TensorDetail> inputs_, outputs_;
  std::vector<TensorSpec> input_specs_, output_specs_;
};

}  // namespace

std::unique_ptr<Session> open_tflite_python_session(const std::filesystem::path& model, const SessionOptions& options,
                                                    bool xnnpack) {
  return std::make_unique<TflitePythonSession>(model, options, xnnpack);
}

std::string tflite_python_runtime() {
  start_python();
  py::Gil gil;
  py::Ref metadata = py::import("importlib.metadata");
  const auto version = py::to_string(py::check(PyObject_CallMethod(metadata.get(), "version", "s", "ai-edge-litert"), "version"));
  std::string python_version = Py_GetVersion();
  return "ai-edge-litert " + version + " in CPython " + python_version.substr(0, python_version.find(' '));
}

}  // namespace infermark

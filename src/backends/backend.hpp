// The interface every framework implements. A Backend opens a model file into a Session;
// a Session runs inference on inputs bound once up front, so the timed call is inference only.
// Each backend is a shared library exporting `infermark_backend_entry` (see plugin.hpp).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/effective_setting.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace infermark {

// One framework-specific option a backend accepts through --opt KEY=VALUE.
struct OptionDoc {
  std::string key;
  std::string values;         // "on|off", "disable|basic|extended|all", "N"
  std::string default_value;  // what applies when the option is not given
  std::string description;
};

struct BackendInfo {
  std::string name;                  // CLI name, e.g. "onnxruntime"
  std::string framework;             // human name, e.g. "ONNX Runtime"
  std::string version;               // the version of the library actually loaded
  std::vector<std::string> formats;  // model formats it reads, e.g. {"onnx"}
  std::vector<std::string> devices;  // devices it can run on here, e.g. {"cpu"}
  std::string notes;                 // provenance of the runtime, caveats
  std::vector<OptionDoc> options;    // the --opt keys it accepts
};

struct SessionOptions {
  int intra_op_threads = 0;  // 0: framework default
  int inter_op_threads = 0;  // 0: framework default
  std::string device = "cpu";
  std::string precision = "fp32";
  int expected_concurrency = 1;               // parallel requests the scenario will issue (tunes e.g. OpenVINO's hint)
  std::string artifacts_dir;                  // where a backend may write framework artifacts (profiles); "" = none
  std::map<std::string, std::string> extras;  // framework-specific --opt key=value
};

// What a session can do beyond the required calls, declared by the session itself (it may depend
// on how it was opened: LibTorch feeds inputs in place only at fp32). Callers ask before they call
// an optional method; a session is never called for a capability it does not declare.
struct SessionCapabilities {
  bool in_place_inputs = false;  // overwrite_input(): the bound input buffers are the framework's inputs
  bool varying_shapes = false;   // set_input_sets() and run_set(): inputs whose shapes change between queries
};

// The contract every framework implements. Required: the pure virtual methods. Optional: the
// methods a capability in capabilities() enables; their defaults throw an Error naming the missing
// declaration, which only a caller that skipped the check can meet.
class Session {
 public:
  virtual ~Session() = default;
  virtual SessionCapabilities capabilities() const = 0;
  virtual const std::vector<TensorSpec>& input_specs() const = 0;
  virtual const std::vector<TensorSpec>& output_specs() const = 0;
  // Copies/binds the inputs into framework tensors for `slots` independent request contexts
  // (infer requests, bindings); not timed. 1 <= slots <= max_slots().
  virtual void set_inputs(const std::vector<Tensor>& inputs, int slots) = 0;
  // One inference on the inputs bound to `slot`; this is the call the harness times. Calls on
  // different slots may overlap in time (concurrent clients of one session).
  virtual void run(int slot) = 0;
  // How many slots may run concurrently on this one session; 1 when the framework's session is
  // not safe to use from several threads (the harness then opens one session per client).
  virtual int max_slots() const = 0;
  // Host copies of slot 0's last outputs; not timed.
  virtual std::vector<Tensor> outputs() = 0;
  virtual std::vector<EffectiveSetting> effective_settings() const = 0;

  // Optional, capability `in_place_inputs`: overwrites the data of bound input `index` in place
  // (same dtype and byte size as bound) for every slot, so a pipeline stage feeds each request
  // without binding again. Throws an Error when the data does not fit the bound input. Sessions
  // without the capability copied their inputs at binding time: callers call set_inputs again.
  virtual void overwrite_input(std::size_t index, std::span<const std::byte> data);
  // Optional, capability `varying_shapes`: binds every input set, each with its own shapes, for
  // `slots` request contexts; not timed. `few_shapes`: the sets hold a few bucketed shapes, which a
  // framework that can prepare shapes one by one (a static compilation each) should prepare.
  // run_set(slot, set) is then the timed call; outputs() gives slot 0's last run.
  virtual void set_input_sets(const std::vector<std::vector<Tensor>>& sets, int slots, bool few_shapes);
  virtual void run_set(int slot, std::size_t set);

  // Always available, overriding is optional. Serving (`infermark serve`): one inference on
  // `inputs` (any batch size the model accepts), returning the outputs; new inputs every call. The
  // default binds and runs slot 0; frameworks whose binding recompiles for a new shape override it
  // to keep one preparation per shape.
  virtual std::vector<Tensor> infer(const std::vector<Tensor>& inputs) {
    set_inputs(inputs, 1);
    run(0);
    return outputs();
  }
  // The version of the framework library this session runs, where a backend can run more than
  // one (TFLite: LiteRT's CompiledModel or TfLite's C API); results then name it
  // instead of the backend's default. Empty (the default): the backend's own version.
  virtual std::string library_version() const { return ""; }
};

class Generator;  // backends/generator.hpp

// What a backend opens besides sessions.
struct BackendCapabilities {
  bool generators = false;  // open_generator(): language models decoded token by token (llama.cpp)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendInfo info() const = 0;
  virtual BackendCapabilities capabilities() const = 0;
  // Throws infermark::Error naming the model file and the framework's own reason on failure.
  virtual std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options) = 0;
  // Optional, capability `generators`. Throws infermark::Error like open().
  virtual std::unique_ptr<Generator> open_generator(const std::filesystem::path& model, const SessionOptions& options);
};

// Throws infermark::Error naming the framework and the model when `backend` does not declare
// generators: the check callers make before open_generator().
void require_generators(const Backend& backend, const std::filesystem::path& model);

// Model format from the file name: "onnx", "openvino-ir", "torchscript", "tflite", "gguf",
// "onnx-genai" (a model folder named *.genai), "openvino-llm" (a model folder named *.ov), or "".
std::string model_format(const std::filesystem::path& model);

// Whether models of `format` are folders (ONNX Runtime GenAI's *.genai, OpenVINO's *.ov) rather than files.
bool is_folder_format(const std::string& format);

// Whether `model` is a language model that backends open as a Generator (GGUF, ONNX Runtime GenAI
// and OpenVINO LLM folders) rather than a tensor model opened as a Session.
bool is_language_model(const std::filesystem::path& model);

}  // namespace infermark

#include "backends/registry.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "backends/plugin.hpp"
#include "core/error.hpp"

namespace infermark {

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names{"onnxruntime", "openvino", "opencv", "libtorch", "tflite", "llamacpp"};
  return names;
}

bool backend_reads(const std::string& name, const std::string& format) {
  static const std::map<std::string, std::vector<std::string>> formats{
      {"onnxruntime", {"onnx"}}, {"openvino", {"onnx", "openvino-ir"}}, {"opencv", {"onnx"}},
      {"libtorch", {"torchscript"}}, {"tflite", {"tflite"}}, {"llamacpp", {"gguf"}}};
  const auto it = formats.find(name);
  return it != formats.end() && std::find(it->second.begin(), it->second.end(), format) != it->second.end();
}

LoadedBackend::~LoadedBackend() {
  backend_.reset();
  // The library stays mapped: frameworks register atexit handlers and thread-local destructors
  // that would run after dlclose and crash.
  (void)library_;
}

BackendRegistry::BackendRegistry(std::filesystem::path default_dir) {
  if (const char* env = std::getenv("INFERMARK_BACKEND_PATH")) {
    std::stringstream dirs(env);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) search_dirs_.emplace_back(dir);
  }
  search_dirs_.push_back(std::move(default_dir));
}

std::filesystem::path BackendRegistry::plugin_path(const std::string& name) const {
  const auto file = "libinfermark_backend_" + name + ".so";
  for (const auto& dir : search_dirs_)
    if (std::filesystem::exists(dir / file)) return dir / file;
  return {};
}

std::vector<std::string> BackendRegistry::available() const {
  std::vector<std::string> names;
  for (const auto& name : known_backend_names())
    if (!plugin_path(name).empty()) names.push_back(name);
  return names;
}

bool BackendRegistry::is_available(const std::string& name) const { return !plugin_path(name).empty(); }

void BackendRegistry::check_known(const std::string& name) {
  const auto& known = known_backend_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw Error("unknown backend '" + name + "' (known backends: " + list + ")");
}

std::unique_ptr<LoadedBackend> BackendRegistry::load(const std::string& name) const {
  check_known(name);
  const auto path = plugin_path(name);
  if (path.empty())
    throw Error("backend '" + name + "' is not built into this infermark (see `infermark backends`)");
  // RTLD_LOCAL keeps each framework's bundled protobuf/TBB/OpenMP symbols to itself.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) throw Error("backend '" + name + "': cannot load " + path.string() + ": " + dlerror());
  using EntryFn = InfermarkBackendEntry (*)();
  auto entry_fn = reinterpret_cast<EntryFn>(dlsym(library, "infermark_backend_entry"));
  if (!entry_fn) throw Error("backend '" + name + "': " + path.string() + " has no infermark_backend_entry");
  const auto entry = entry_fn();
  if (entry.abi_version != INFERMARK_BACKEND_ABI_VERSION)
    throw Error("backend '" + name + "': plugin ABI " + std::to_string(entry.abi_version) + " but infermark expects " +
                std::to_string(INFERMARK_BACKEND_ABI_VERSION) + " (rebuild it)");
  return std::make_unique<LoadedBackend>(library, std::unique_ptr<Backend>(entry.create()));
}

std::filesystem::path default_plugin_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("backends") : exe.parent_path() / "backends";
}

}  // namespace infermark

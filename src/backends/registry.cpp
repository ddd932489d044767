#include "backends/registry.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

#include "backends/plugin.hpp"
#include "core/error.hpp"

namespace infermark {

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names = declared_backends().names();
  return names;
}

bool backend_reads(const std::string& name, const std::string& format) { return declared_backends().reads(name, format); }

LoadedBackend::~LoadedBackend() {
  backend_.reset();
  // The library stays mapped: frameworks register atexit handlers and thread-local destructors
  // that would run after dlclose and crash.
  (void)library_;
}

BackendRegistry::BackendRegistry(std::filesystem::path default_dir, const BackendTable& table) : table_(&table) {
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
  for (const auto& name : table_->names())
    if (!plugin_path(name).empty()) names.push_back(name);
  return names;
}

bool BackendRegistry::is_available(const std::string& name) const { return !plugin_path(name).empty(); }

void BackendRegistry::check_known(const std::string& name) { declared_backends().check_known(name); }

std::unique_ptr<LoadedBackend> BackendRegistry::load(const std::string& name) const {
  table_->check_known(name);
  const auto path = plugin_path(name);
  if (path.empty()) throw Error("backend '" + name + "' is not built into this infermark (see `infermark backends`)");
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

// Finds backend plugins (libinfermark_backend_<name>.so) at run time and loads them on demand,
// so a missing or broken framework never affects the others.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/declared.hpp"

namespace infermark {

// Backends infermark knows how to build (declared_backends()), in the order comparisons list them.
const std::vector<std::string>& known_backend_names();

// Whether backend `name` reads models of `format` (see model_format()). Known without loading
// the plugin, so choosing backends never loads a framework into the orchestrating process.
bool backend_reads(const std::string& name, const std::string& format);

class LoadedBackend {
 public:
  LoadedBackend(void* library, std::unique_ptr<Backend> backend) : library_(library), backend_(std::move(backend)) {}
  ~LoadedBackend();
  LoadedBackend(const LoadedBackend&) = delete;
  LoadedBackend& operator=(const LoadedBackend&) = delete;
  Backend& operator*() const { return *backend_; }
  Backend* operator->() const { return backend_.get(); }

 private:
  void* library_;
  std::unique_ptr<Backend> backend_;
};

class BackendRegistry {
 public:
  // Searches $INFERMARK_BACKEND_PATH (colon-separated) then `default_dir`, for the backends of
  // `table` (tests pass one that also holds their fixture backends).
  explicit BackendRegistry(std::filesystem::path default_dir, const BackendTable& table = declared_backends());

  // Names of the plugins present, in the table's order.
  std::vector<std::string> available() const;
  bool is_available(const std::string& name) const;
  // Throws infermark::Error: unknown name (lists the known ones), not built, or fails to load.
  std::unique_ptr<LoadedBackend> load(const std::string& name) const;
  // Validates a user's backend list: throws for names infermark does not know at all.
  static void check_known(const std::string& name);

 private:
  std::filesystem::path plugin_path(const std::string& name) const;
  const BackendTable* table_;
  std::vector<std::filesystem::path> search_dirs_;
};

// Folder of the running executable's plugins: <exe dir>/backends.
std::filesystem::path default_plugin_dir();

}  // namespace infermark

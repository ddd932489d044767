// The backends and model formats that the src/backends/<name>/backend.cmake files declare, as one
// table that CMake generates at configure time (cmake/Backends.cmake). Every list of frameworks,
// formats or model-file extensions in infermark derives from it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace infermark {

// A model file format, with the file extensions that mean it (".onnx").
struct ModelFormatDeclaration {
  std::string_view name;                         // "onnx", "openvino-ir", ...
  std::span<const std::string_view> extensions;  // with the dot: ".xml"
};

struct BackendDeclaration {
  std::string_view name;                      // CLI and plugin name: libinfermark_backend_<name>.so
  std::string_view framework;                 // human name, e.g. "ONNX Runtime"
  std::string_view description;               // one line
  std::span<const std::string_view> formats;  // names of the formats it reads
  std::string_view folder;                    // its folder, relative to the repository root
};

// The declared backends, in preference order (the order comparisons run and list them), and
// the formats they read, each once.
struct BackendTable {
  std::span<const BackendDeclaration> backends;
  std::span<const ModelFormatDeclaration> formats;

  const BackendDeclaration* find(std::string_view name) const;
  // Throws infermark::Error for a name the table does not hold, listing the ones it does.
  void check_known(std::string_view name) const;
  std::vector<std::string> names() const;
  bool reads(std::string_view backend, std::string_view format) const;
  // The format an extension (".onnx") means, or nullptr.
  const ModelFormatDeclaration* format_of_extension(std::string_view extension) const;
  // Every extension, for messages and help: ".onnx, .xml, .pt, ...".
  std::string extensions_text() const;
};

// Every backend with a folder under src/backends/, built into this infermark or not. Generated.
const BackendTable& declared_backends();

// A plugin's info(): name, framework and formats from its folder's declaration, so the two cannot
// drift apart, and what only the loaded framework knows. Throws for a name with no declaration.
BackendInfo declared_backend_info(std::string_view name, std::string version, std::vector<std::string> devices, std::string notes,
                                  std::vector<OptionDoc> options);

}  // namespace infermark

#include "backends/declared.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace infermark {

const BackendDeclaration* BackendTable::find(std::string_view name) const {
  for (const auto& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

void BackendTable::check_known(std::string_view name) const {
  if (find(name)) return;
  std::string list;
  for (const auto& k : names()) list += (list.empty() ? "" : ", ") + k;
  throw Error("unknown backend '" + std::string(name) + "' (known backends: " + list + ")");
}

std::vector<std::string> BackendTable::names() const {
  std::vector<std::string> out;
  for (const auto& b : backends) out.emplace_back(b.name);
  return out;
}

bool BackendTable::reads(std::string_view backend, std::string_view format) const {
  const auto* b = find(backend);
  return b && std::find(b->formats.begin(), b->formats.end(), format) != b->formats.end();
}

const ModelFormatDeclaration* BackendTable::format_of_extension(std::string_view extension) const {
  for (const auto& f : formats)
    if (std::find(f.extensions.begin(), f.extensions.end(), extension) != f.extensions.end()) return &f;
  return nullptr;
}

std::string BackendTable::extensions_text() const {
  std::string out;
  for (const auto& f : formats)
    for (const auto& e : f.extensions) out += (out.empty() ? "" : ", ") + std::string(e);
  return out;
}

BackendInfo declared_backend_info(std::string_view name, std::string version, std::vector<std::string> devices, std::string notes,
                                  std::vector<OptionDoc> options) {
  const auto* b = declared_backends().find(name);
  if (!b)
    throw Error("backend '" + std::string(name) + "' has no declaration (src/backends/" + std::string(name) + "/backend.cmake)");
  std::vector<std::string> formats(b->formats.begin(), b->formats.end());
  return {std::string(b->name), std::string(b->framework), std::move(version), std::move(formats),
          std::move(devices),   std::move(notes),          std::move(options)};
}

std::string model_format(const std::filesystem::path& model) {
  // "models/m.genai/" names the folder too: its extension is that of the path without the slash.
  const auto path = model.has_filename() ? model : model.parent_path();
  const auto* format = declared_backends().format_of_extension(path.extension().string());
  return format ? std::string(format->name) : std::string();
}

bool is_folder_format(const std::string& format) {
  return format == "onnx-genai" || format == "openvino-llm" || format == "paddle";  // *.genai, *.ov, *.paddle
}

bool is_language_model(const std::filesystem::path& model) {
  const auto format = model_format(model);
  return format == "gguf" || format == "onnx-genai" || format == "openvino-llm";
}

}  // namespace infermark

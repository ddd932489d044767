#include "core/model_name.hpp"

#include <array>
#include <string_view>

namespace infermark {

std::string model_name(const std::filesystem::path& model) {
  // Extensions that end a name together: the format's files share everything before them.
  constexpr std::array<std::string_view, 2> kCompound{".ncnn.param", ".ncnn.bin"};
  const auto file = model.has_filename() ? model.filename().string() : model.parent_path().filename().string();
  for (const auto compound : kCompound)
    if (file.size() > compound.size() && file.ends_with(compound)) return file.substr(0, file.size() - compound.size());
  return std::filesystem::path(file).stem().string();
}

}  // namespace infermark

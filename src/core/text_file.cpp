#include "core/text_file.hpp"

#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace infermark {

std::string read_text_file(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(what + " " + file.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace infermark

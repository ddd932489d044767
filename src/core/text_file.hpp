// Reading a whole text file a flag named (a corpus, a perplexity text).
#pragma once

#include <filesystem>
#include <string>

namespace infermark {

// The file's bytes; throws infermark::Error "`what` FILE: cannot be read" (`what`: the flag).
std::string read_text_file(const std::filesystem::path& file, const std::string& what);

}  // namespace infermark

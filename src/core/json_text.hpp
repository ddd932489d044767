// JSON text that never fails on bad text: bytes that are not UTF-8 (framework messages, file and
// model names, HTTP bodies, model output) become U+FFFD instead of nlohmann's type_error.316, so
// writing a result or an answer cannot throw on what a framework or a client sent.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace infermark {

// `j` as text (`indent` as nlohmann's dump: -1 compact), invalid UTF-8 replaced.
std::string json_text(const nlohmann::json& j, int indent = -1);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace infermark

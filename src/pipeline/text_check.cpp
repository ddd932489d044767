#include "pipeline/text_check.hpp"

#include <algorithm>
#include <fstream>

#include "core/error.hpp"

namespace infermark::pipeline {
namespace {

std::u32string code_points(const std::string& text) {
  std::u32string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 1;
    char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out.push_back(cp);
    i += length;
  }
  return out;
}

std::vector<std::string> read_characters(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot read the recogniser's character list");
  std::vector<std::string> characters;
  for (std::string line; std::getline(in, line);) characters.push_back(line);
  if (characters.empty()) throw Error(file.string() + ": the character list is empty (one symbol a line)");
  return characters;
}

std::vector<std::vector<std::string>> read_labels(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot read the text labels");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error(file.string() + ": not JSON (" + e.what() + ")");
  }
  const auto* lines = j.is_object() && j.contains("lines") ? &j["lines"] : nullptr;
  if (!lines || !lines->is_array() || lines->empty())
    throw Error(file.string() + ": 'lines' must be a non-empty list (one list of text lines per image)");
  std::vector<std::vector<std::string>> labels;
  for (std::size_t i = 0; i < lines->size(); ++i) {
    const auto& image = (*lines)[i];
    if (!image.is_array() || !std::all_of(image.begin(), image.end(), [](const auto& l) { return l.is_string(); }))
      throw Error(file.string() + ": lines[" + std::to_string(i) + "] must be a list of strings");
    labels.push_back(image.get<std::vector<std::string>>());
  }
  return labels;
}

// Spaces do not count, as in PaddleOCR's own recognition metric (its default, ignore_space): the
// PP-OCR recognisers often leave out the spaces between words.
std::string without_spaces(std::string text) {
  std::erase(text, ' ');
  return text;
}

std::vector<std::string> compared(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(without_spaces(l));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace

nlohmann::json to_json(const TextCheckSpec& spec) {
  return {{"labels", spec.labels.string()}, {"characters", spec.characters.string()}};
}

std::vector<std::string> decode_text_lines(const Tensor& scores, int count, const std::vector<std::string>& characters) {
  if (scores.dtype != DType::kFloat32 || scores.shape.size() != 3)
    throw Error("text check: the recogniser's output '" + scores.name + "' is " + std::string(dtype_name(scores.dtype)) + " " +
                format_shape(scores.shape) + "; it decodes float32 [lines, steps, classes]");
  const auto lines = scores.shape[0], steps = scores.shape[1], classes = scores.shape[2];
  const auto* data = scores.as<float>();
  std::vector<std::string> out;
  for (std::int64_t line = 0; line < std::min<std::int64_t>(count, lines); ++line) {
    std::string text;
    std::int64_t previous = 0;
    for (std::int64_t step = 0; step < steps; ++step) {
      const float* row = data + (line * steps + step) * classes;
      const auto best = static_cast<std::int64_t>(std::max_element(row, row + classes) - row);
      if (best != 0 && best != previous) {
        if (static_cast<std::size_t>(best) > characters.size())
          throw Error("text check: class " + std::to_string(best) + " is beyond the " + std::to_string(characters.size()) +
                      " symbols of the character list");
        text += characters[static_cast<std::size_t>(best - 1)];
      }
      previous = best;
    }
    out.push_back(text);
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  const auto x = code_points(a), y = code_points(b);
  std::vector<std::size_t> row(y.size() + 1);
  for (std::size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= x.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= y.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[y.size()];
}

TextChecker::TextChecker(const TextCheckSpec& spec)
    : labels_(read_labels(spec.labels)), characters_(read_characters(spec.characters)) {
  record_.labels = spec.labels.string();
  record_.characters = spec.characters.string();
}

result::TextCheckRecord TextChecker::record() const {
  auto r = record_;
  const auto share = [](std::uint64_t part, std::uint64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  r.line_accuracy = share(r.lines_exact, r.lines_expected);
  r.character_accuracy = r.characters_expected ? std::max(0.0, 1.0 - share(r.character_errors, r.characters_expected)) : 0.0;
  return r;
}

void TextChecker::add(std::uint32_t sample, const std::vector<Tensor>& outputs, int lines) {
  if (sample >= labels_.size())
    throw Error(record_.labels + ": holds " + std::to_string(labels_.size()) + " images' lines but the input has sample " +
                std::to_string(sample) + " (one entry per image of the input file)");
  if (outputs.empty()) throw Error("text check: the recogniser gave no output");
  const auto recognised = decode_text_lines(outputs.front(), lines, characters_);
  const auto& expected = labels_[sample];
  const auto shown = compared(expected), read = compared(recognised);
  auto unmatched = read;
  std::uint64_t exact = 0;
  for (const auto& line : shown)
    if (const auto it = std::find(unmatched.begin(), unmatched.end(), line); it != unmatched.end()) {
      ++exact;
      unmatched.erase(it);
    }
  auto& r = record_;
  // Each image once, in the input file's order.
  const auto at =
      std::lower_bound(r.samples.begin(), r.samples.end(), sample, [](const auto& s, std::uint32_t i) { return s.sample < i; });
  if (at == r.samples.end() || at->sample != sample) r.samples.insert(at, {sample, expected, recognised});
  ++r.requests;
  r.lines_expected += expected.size();
  r.lines_recognised += recognised.size();
  r.lines_exact += exact;
  const auto truth = joined(shown);
  r.characters_expected += code_points(truth).size();
  r.character_errors += edit_distance(joined(read), truth);
}

}  // namespace infermark::pipeline

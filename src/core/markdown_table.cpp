#include "core/markdown_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infermark {
namespace {

// Characters, not bytes: fmt pads UTF-8 text ("±", "×") by code points, so widths must agree.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string markdown_table(const std::vector<MarkdownColumn>& columns, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& c : columns) widths.push_back(std::max<std::size_t>(display_width(c.title), 3));
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));

  auto line = [&](auto cell_text) {
    std::string out = "|";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string text = cell_text(i);
      out += columns[i].right_aligned ? fmt::format(" {:>{}} |", text, widths[i]) : fmt::format(" {:<{}} |", text, widths[i]);
    }
    return out + "\n";
  };
  std::string table = line([&](std::size_t i) { return columns[i].title; });
  table += line([&](std::size_t i) {
    return columns[i].right_aligned ? std::string(widths[i] - 1, '-') + ":" : std::string(widths[i], '-');
  });
  for (const auto& row : rows) table += line([&](std::size_t i) { return i < row.size() ? row[i] : std::string(); });
  return table;
}

std::string format_number(double v) {
  if (v == 0.0 || !std::isfinite(v)) return fmt::format("{}", v);
  const int decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::abs(v)))), 0, 6);
  return fmt::format("{:.{}f}", v, decimals);
}

}  // namespace infermark

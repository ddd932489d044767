// A Markdown table padded to column width, so it reads well in a terminal and renders as a
// table when pasted into a document.
#pragma once

#include <string>
#include <vector>

namespace infermark {

struct MarkdownColumn {
  std::string title;
  bool right_aligned = false;  // numbers: right-aligned, with a "---:" rule
};

// Rows shorter than the header are padded with empty cells. Ends with a newline.
std::string markdown_table(const std::vector<MarkdownColumn>& columns, const std::vector<std::vector<std::string>>& rows);

// A table number: four significant digits without exponent notation (206.5, 4.512, 0.05234).
std::string format_number(double value);

}  // namespace infermark

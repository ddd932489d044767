// The three field guides infermark implements. Reports, `recommend` and docs cite them by title
// and section: the titles are what a reader outside the project can look up.
#pragma once

#include <string>
#include <string_view>

namespace infermark::report {

enum class FieldGuide {
  kPerformanceEvaluation,  // frameworks on ResNet-50, BERT, CLIP: latency, QPS, energy, memory, threads, precision
  kSelectionAndPractice,   // scenario and hardware matrix, serving practice, the selection path
  kPerformanceTesting,     // LLM serving: TTFT, throughput, memory per parameter, load patterns
};

constexpr std::string_view title_of(FieldGuide guide) {
  switch (guide) {
    case FieldGuide::kPerformanceEvaluation:
      return "AI model inference framework performance evaluation";
    case FieldGuide::kSelectionAndPractice:
      return "AI model inference framework selection and practice guide";
    case FieldGuide::kPerformanceTesting:
      return "AI model inference framework performance testing, a panoramic analysis";
  }
  return "";
}

// The title between `open` and `close`, then the section: "§3.3", or after a comma a named part
// ("decision tree §5").
inline std::string citation(FieldGuide guide, std::string_view section, std::string_view open, std::string_view close) {
  std::string text = std::string(open) + std::string(title_of(guide)) + std::string(close);
  if (!section.empty()) text += (section.starts_with("§") ? " " : ", ") + std::string(section);
  return text;
}

// "*AI model inference framework performance evaluation*, decision tree §5", for Markdown text.
inline std::string markdown_citation(FieldGuide guide, std::string_view section = "") {
  return citation(guide, section, "*", "*");
}

// "“AI model inference framework performance evaluation” §3.3", for text that is not only
// Markdown (JSON details, the HTML page).
inline std::string quoted_citation(FieldGuide guide, std::string_view section = "") {
  return citation(guide, section, "\u201c", "\u201d");
}

// The LLM serving baselines of the performance-testing guide, shown beside measured LLM cells.
inline constexpr std::string_view kLlmServingBaselines = "TTFT 300 ms, P99 500 ms, 1.2 GB per B parameters";

}  // namespace infermark::report

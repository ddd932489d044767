#include "result/pipeline_mode.hpp"

#include "core/named_enum.hpp"

namespace infermark::result {
namespace {

constexpr NamedValue<PipelineMode> kModes[] = {
    {PipelineMode::kSerial, "serial"}, {PipelineMode::kThreads, "threads"}, {PipelineMode::kProcesses, "processes"}};

}  // namespace

std::string_view name_of(PipelineMode mode) { return name_in(kModes, mode); }

PipelineMode parse_pipeline_mode(const std::string& text, const std::string& what) { return parse_in(kModes, text, what); }

std::vector<std::pair<std::string, PipelineMode>> pipeline_mode_names() { return names_in(kModes); }

const std::vector<PipelineMode>& every_pipeline_mode() {
  static const std::vector<PipelineMode> modes{PipelineMode::kSerial, PipelineMode::kThreads, PipelineMode::kProcesses};
  return modes;
}

}  // namespace infermark::result

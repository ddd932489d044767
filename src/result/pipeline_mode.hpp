// How a pipeline runs its stages: the modes `infermark pipeline` compares, as results record them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infermark::result {

// serial: one thread runs every stage of a request before the next request starts.
// threads: one thread per stage in this process, bounded queues between them, tensors moved.
// processes: one worker process per stage, tensors handed over in shared-memory rings.
enum class PipelineMode { kSerial, kThreads, kProcesses };

std::string_view name_of(PipelineMode mode);  // "serial", "threads", "processes"
// Throws infermark::Error "`what` `text`: unknown (expected serial, threads, processes)".
PipelineMode parse_pipeline_mode(const std::string& text, const std::string& what);
std::vector<std::pair<std::string, PipelineMode>> pipeline_mode_names();
const std::vector<PipelineMode>& every_pipeline_mode();  // in the order above

}  // namespace infermark::result

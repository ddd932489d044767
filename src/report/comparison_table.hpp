// The console comparison table for a set of run results: one row per backend with the
// seeds' columns (latency mean/P50/P99, throughput, peak memory), failures shown in place, and
// the batch each query carried wherever a cell's is not 1.
#pragma once

#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

// The effective value of `key` in a result's settings, or "" when the backend did not report it.
std::string effective_setting(const result::RunResult& result, const std::string& key);

// The threads column: the intra-op count in force, marked "(unverified)" where nothing could read
// it back, "(asked N)" where the framework ran another; "-" when the result has none.
std::string threads_cell(const result::RunResult& result);

// The batch as it ran: a framework without a batch axis (ncnn) runs a batch of N as N
// single-sample inferences in the timed call, which its `batch_execution` setting records; the
// cell says so ("7 (one by one)"), since its latency is not one batched inference's.
std::string batch_cell(const result::RunResult& result);

std::string comparison_table(const std::vector<result::RunResult>& results);

// What the scenario concluded for each result: SLA verdict, knee, highest rate within the SLA,
// soak and pulse verdicts, energy per inference — one or two lines per result.
std::string scenario_notes(const std::vector<result::RunResult>& results);

}  // namespace infermark::report

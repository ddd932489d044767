// Which machine a result was measured on, so reports and recommendations from several machines
// keep each machine's numbers apart (host name and CPU model, as `environment` records them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

// "vm (AMD EPYC 7B13)"; a part the result did not record reads "unknown host" / "unknown CPU".
std::string machine_key(const result::RunResult& result);

// Precision variants of one model (report/model_families) measured on the same machine: what a
// quality loss against a family's reference may be judged from.
bool same_family_on_one_machine(const result::RunResult& a, const result::RunResult& b);

// What the recorded environment says about the machine's hardware.
bool is_x86(const result::RunResult& result);
bool is_arm(const result::RunResult& result);
bool has_gpu(const result::RunResult& result);  // the resource sampler read a GPU during the run

// Results grouped by machine_key, each group in the order given.
std::map<std::string, std::vector<LoadedResult>> group_by_machine(const std::vector<LoadedResult>& results);

}  // namespace infermark::report

// The intra-op thread count a backend reports: read back from the framework where it can say,
// counted in the process where it starts its pool eagerly but cannot say, else marked unverified.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "backends/effective_setting.hpp"

namespace infermark {

// The threads `call` starts in this process and leaves running: /proc/self/task entries that
// appear during the call and are alive after it. nullopt where /proc/self/task cannot be read.
// Counts are serialised within one plugin so two sessions opening at once do not count each
// other's pools; a thread that unrelated code starts meanwhile would still be counted.
std::optional<int> threads_started_by(const std::function<void()>& call);

// A thread count (intra_op_threads unless `key` says otherwise) the framework reported or the
// process showed (`how` says which): verified when it is what was asked (or nothing was asked),
// not applied when it differs.
EffectiveSetting observed_threads(int requested, int observed, const std::string& how,
                                  const std::string& key = "intra_op_threads");

// intra_op_threads of a pool that `starter` ("the session") started with `started` threads beside the
// calling thread, which works in it too (N - 1 workers for N, as ONNX Runtime's and XNNPACK's pools
// are made): verified against the request by that count. `note` is added to the explanation.
EffectiveSetting counted_pool_threads(int requested, int started, const std::string& starter, const std::string& note = "");

// inter_op_threads of a framework that has no inter-op pool: not applicable, and a count asked
// for is not applied, `why` says so.
EffectiveSetting no_inter_op_threads(int requested, const std::string& why);

// intra_op_threads set as asked where nothing can read the count back; `why` says so.
EffectiveSetting unverified_threads(int requested, const std::string& effective, const std::string& why);

}  // namespace infermark

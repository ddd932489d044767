// Measures one cell — one backend, one model, one configuration — in the calling process and
// returns its RunResult. Failures become the result's status and error, never an exception, so
// whatever was measured before the failure is kept.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/input_generator.hpp"
#include "loadgen/sampled_run.hpp"
#include "loadgen/scenario.hpp"
#include "probes/environment.hpp"
#include "probes/resource_sampler.hpp"
#include "result/cell_request.hpp"
#include "result/result_builders.hpp"
#include "result/run_result.hpp"
#include "result/session_sharing.hpp"

namespace infermark::harness {

// Called at each stage ("loading", "binding inputs", "warm-up", ...) so that a crash can be
// attributed to the stage it happened in.
using StageCallback = std::function<void(const std::string& stage)>;

result::RunResult measure_cell(const BackendRegistry& registry, const result::CellRequest& request,
                               const std::atomic<bool>* stop = nullptr, const StageCallback& on_stage = {});

// What every measuring path shares around its framework-specific body: the result skeleton, the
// environment recorded, the stage reported (the worker's heartbeat) and named in the error when the
// body throws. `enter` moves to the next stage.
using CellBody = std::function<void(result::RunResult& result, probes::Environment& environment,
                                    const std::function<void(std::string)>& enter)>;
result::RunResult measure_in_stages(const result::CellRequest& request, const StageCallback& on_stage, const CellBody& body);

// The device a session ran on, whose counter gives the cell's energy: the one asked for, or the CPU
// where the framework did not honour the request (a setting requested as that device, not applied).
probes::EnergyTarget energy_target_for(const SessionOptions& options, const std::vector<EffectiveSetting>& settings);

}  // namespace infermark::harness

// What one variant served, request by request (server-side latency, from arrival to answer),
// kept with the load generator's recorder so a serve session ends as ordinary result files:
// `infermark report` and `infermark compare` read them like any run.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>

#include "loadgen/query_recorder.hpp"
#include "result/run_result.hpp"

namespace infermark::serve {

// Who served the traffic, for the result file.
struct ServedVariant {
  std::string model_name;
  std::filesystem::path model_file;
  std::string variant;
  BackendInfo backend;
  SessionOptions requested;
  std::vector<EffectiveSetting> effective_settings;
  std::vector<TensorSpec> inputs, outputs;
  double load_ms = 0;
  // How it was served: weight, instances and batching, or slots and continuous batching. The
  // traffic's counts and shadow comparisons are added when the result is made.
  result::ServingRecord serving;
  std::optional<std::string> batching;  // language models
};

// This variant's outputs against its shadow's on mirrored requests, at one input shape.
struct ShadowAgreement {
  std::uint64_t compared = 0, disagreed = 0;
  double max_abs_error = 0;
};

class ServedTraffic {
 public:
  ServedTraffic();
  void record_success(std::int64_t latency_ns, std::int64_t rows);
  void record_error();
  // A mirrored request compared with `shadow` (or dropped: the shadow refused or failed it).
  void record_shadow(const std::string& shadow, const std::string& shape, bool disagreed, double max_abs_error);
  void record_shadow_dropped(const std::string& shadow);
  std::uint64_t requests() const;
  // One result: scenario "serve" (live traffic, not a load pattern infermark chose), latency of
  // every successful request, throughput over the time from the first request to the last.
  // `environment`: the machine's, captured once for every variant written together.
  result::RunResult result(const ServedVariant& variant, const nlohmann::json& environment) const;

 private:
  mutable std::mutex mutex_;
  std::int64_t started_ns_;
  std::int64_t first_ns_ = 0, last_ns_ = 0;
  std::uint64_t rows_ = 0;
  loadgen::QueryRecorder recorder_;
  std::map<std::string, std::map<std::string, ShadowAgreement>> shadow_;  // [shadow][shape]
  std::map<std::string, std::uint64_t> shadow_dropped_;
};

// Writes one result per variant under `folder`; returns the files written.
std::vector<std::filesystem::path> write_served_results(
    const std::filesystem::path& folder, const std::vector<std::pair<ServedVariant, const ServedTraffic*>>& variants);

}  // namespace infermark::serve

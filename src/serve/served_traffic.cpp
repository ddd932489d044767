#include "serve/served_traffic.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "probes/environment.hpp"
#include "probes/memory.hpp"
#include "result/result_builders.hpp"

namespace infermark::serve {
namespace {

constexpr std::size_t kExactSamples = 1'000'000;  // beyond this, percentiles come from the histogram

loadgen::RecorderLimits limits() {
  loadgen::RecorderLimits l;
  l.max_duration_ns = 24ll * 3600 * 1'000'000'000;  // a day of serving in the time series (coarser intervals)
  l.max_exact_samples = kExactSamples;
  return l;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

ServedTraffic::ServedTraffic() : started_ns_(mono_now_ns()), recorder_(limits()) {}

void ServedTraffic::record_success(std::int64_t latency_ns, std::int64_t rows) {
  const auto now = mono_now_ns();
  std::lock_guard lock(mutex_);
  if (first_ns_ == 0) first_ns_ = now - latency_ns;
  last_ns_ = now;
  rows_ += static_cast<std::uint64_t>(rows);
  recorder_.record(now - started_ns_, latency_ns);
}

void ServedTraffic::record_error() {
  std::lock_guard lock(mutex_);
  recorder_.record_error(mono_now_ns() - started_ns_);
}

void ServedTraffic::record_shadow(const std::string& shadow, const std::string& shape, bool disagreed, double max_abs_error) {
  std::lock_guard lock(mutex_);
  auto& agreement = shadow_[shadow][shape];
  ++agreement.compared;
  agreement.disagreed += disagreed ? 1 : 0;
  agreement.max_abs_error = std::max(agreement.max_abs_error, max_abs_error);
}

void ServedTraffic::record_shadow_dropped(const std::string& shadow) {
  std::lock_guard lock(mutex_);
  ++shadow_dropped_[shadow];
}

std::uint64_t ServedTraffic::requests() const {
  std::lock_guard lock(mutex_);
  return recorder_.completed();
}

result::RunResult ServedTraffic::result(const ServedVariant& variant, const nlohmann::json& environment) const {
  result::RunResult r;
  r.origin = result::ResultOrigin::kServed;
  r.started_at = utc_now();
  r.isolation = "in-process (infermark serve: every variant in one server process)";
  r.model = result::describe_model(variant.model_file);
  r.model.name = variant.model_name;
  r.model.inputs = variant.inputs;
  r.model.outputs = variant.outputs;
  r.backend = variant.backend;
  r.requested = variant.requested;
  r.effective_settings = variant.effective_settings;
  r.scenario.name = std::nullopt;  // served traffic: no load generator scenario shaped it
  r.scenario.warmup_runs = 0;
  auto& parameters = r.scenario.parameters;
  parameters.batching = variant.batching;
  auto& serving = parameters.serving.emplace(variant.serving);
  serving.variant = variant.variant;
  serving.latency_measured = "server side: request parsed to response ready (network and client excluded)";
  r.timing.load_ms = variant.load_ms;
  std::lock_guard lock(mutex_);
  r.scenario.timed_runs = static_cast<int>(recorder_.completed());
  serving.errors = recorder_.errors();
  serving.rows = static_cast<std::uint64_t>(rows_);
  for (const auto& [shadow, by_shape] : shadow_)
    for (const auto& [shape, a] : by_shape)
      serving.shadow[shadow].by_shape.push_back({shape, a.compared, a.disagreed, a.max_abs_error});
  for (const auto& [shadow, dropped] : shadow_dropped_) serving.shadow[shadow].dropped = dropped;
  result::fill_latency_and_throughput(r, recorder_, static_cast<double>(last_ns_ - first_ns_) * 1e-9);
  // Rows per request can exceed 1 (clients send batches): inferences/s counts rows.
  if (r.throughput.wall_s > 0) r.throughput.inferences_per_s = static_cast<double>(rows_) / r.throughput.wall_s;
  r.memory.peak_rss_mb = probes::read_process_memory().peak_rss_mb;
  r.memory.peak_scope = "the whole server process (every variant it served)";
  if (recorder_.completed() == 0) {
    r.status = result::CellStatus::kFailed;
    r.error = "no successful request was served by this variant";
  }
  r.environment = environment;
  return r;
}

std::vector<std::filesystem::path> write_served_results(
    const std::filesystem::path& folder, const std::vector<std::pair<ServedVariant, const ServedTraffic*>>& variants) {
  std::filesystem::create_directories(folder);
  std::vector<std::filesystem::path> written;
  const auto environment = probes::to_json(probes::capture_environment());
  for (const auto& [variant, traffic] : variants) {
    const auto path = folder / (variant.model_name + "-" + variant.variant + ".json");
    result::write_run_result(traffic->result(variant, environment), path.string());
    written.push_back(path);
  }
  return written;
}

}  // namespace infermark::serve

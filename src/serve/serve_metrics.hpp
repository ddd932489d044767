// Prometheus metrics of `infermark serve`, exposed as text at /metrics. Triton's names
// (nv_inference_*) where one means the same thing, so existing dashboards work; infermark_*
// for what Triton does not export (latency histograms by phase, batch sizes, A/B, shadow).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace infermark::serve {

// How a request's variant was chosen (infermark_routed_total's `by` label).
enum class RouteChoice { kHeader, kVersion, kSticky, kWeighted };
inline constexpr std::size_t kRouteChoices = 4;
std::string_view route_choice_label(RouteChoice choice);

// Why a request failed (nv_inference_request_failure's `reason` label, Triton's four).
enum class FailureReason { kRejected, kCanceled, kBackend, kOther };
inline constexpr std::size_t kFailureReasons = 4;
std::string_view failure_reason_label(FailureReason reason);

// One variant's metric cells (prometheus-cpp cells are thread-safe and live as long as the registry).
// The nv_inference_* cells are written only through InferenceStatistics, which keeps /stats in step.
struct VariantMetrics {
  prometheus::Counter* success = nullptr;                        // nv_inference_request_success (requests)
  std::array<prometheus::Counter*, kFailureReasons> failures{};  // nv_inference_request_failure by FailureReason
  prometheus::Counter* inferences = nullptr;                     // nv_inference_count (rows of successful requests)
  prometheus::Counter* executions = nullptr;                     // nv_inference_exec_count (successful batches)
  prometheus::Counter* request_us = nullptr;                     // nv_inference_request_duration_us (per successful request)
  prometheus::Counter* queue_us = nullptr;                       // nv_inference_queue_duration_us (per successful request)
  prometheus::Counter* compute_us = nullptr;         // nv_inference_compute_infer_duration_us (per successful request)
  prometheus::Gauge* pending = nullptr;              // nv_inference_pending_request_count
  prometheus::Histogram* total_seconds = nullptr;    // infermark_request_duration_seconds{phase="total"}
  prometheus::Histogram* queue_seconds = nullptr;    // ...{phase="queue"}
  prometheus::Histogram* compute_seconds = nullptr;  // ...{phase="compute"}
  prometheus::Histogram* batch_rows = nullptr;       // infermark_batch_size
  prometheus::Gauge* breaker_open = nullptr;         // infermark_circuit_breaker_open
  prometheus::Counter* inline_executions = nullptr;  // infermark_inline_executions_total
  // Looked up once: a label lookup per request showed in the server's overhead.
  prometheus::Counter* ok_requests = nullptr;                // infermark_requests_total{code="200"}
  std::array<prometheus::Counter*, kRouteChoices> routed{};  // infermark_routed_total by RouteChoice
};

// A served language model's cells: time to first token, time per output token, tokens, slots.
struct GenerationMetrics {
  prometheus::Counter* success = nullptr;               // nv_inference_request_success
  prometheus::Histogram* total_seconds = nullptr;       // infermark_request_duration_seconds{phase="total"}
  prometheus::Histogram* ttft_seconds = nullptr;        // infermark_time_to_first_token_seconds
  prometheus::Histogram* tpot_seconds = nullptr;        // infermark_time_per_output_token_seconds
  prometheus::Counter* prompt_tokens = nullptr;         // infermark_prompt_tokens_total
  prometheus::Counter* prompt_tokens_reused = nullptr;  // infermark_prompt_tokens_reused_total (prefix cache)
  prometheus::Counter* generated_tokens = nullptr;      // infermark_generated_tokens_total
  prometheus::Gauge* active_sequences = nullptr;        // infermark_active_sequences
  prometheus::Gauge* pending = nullptr;                 // nv_inference_pending_request_count
};

class ServeMetrics {
 public:
  ServeMetrics();

  VariantMetrics variant(const std::string& model, const std::string& variant);
  GenerationMetrics generation(const std::string& model, const std::string& variant);
  // Request outcomes by HTTP status.
  void count_request(const std::string& model, const std::string& variant, int http_status);
  void count_rejection(const std::string& model, const std::string& variant, const std::string& reason);
  void count_routing(const std::string& model, const std::string& variant, RouteChoice how);
  // One OpenAI request field accepted with no effect. Clients choose the names, so the first
  // kMaxIgnoredFieldNames get a series each and later ones share field="(other)". True the first
  // time a name (or "(other)") is counted, for a one-time log line.
  bool count_ignored_field(const std::string& field);
  static constexpr std::size_t kMaxIgnoredFieldNames = 32;
  // One shadow comparison at an input shape: max abs error and whether the outputs agreed by their kind's rule.
  void count_shadow(const std::string& model, const std::string& variant, const std::string& shadow, const std::string& shape,
                    bool disagreed, double max_abs_error);
  void count_shadow_dropped(const std::string& model, const std::string& variant, const std::string& shadow);
  // Requests being handled, over every protocol (see InFlightRequest).
  void add_in_flight(double requests);

  // The text exposition format (0.0.4), with process RSS and CPU read at this moment.
  std::string scrape();

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::mutex mutex_;  // families' Add is thread-safe; this guards the process gauges' refresh
  prometheus::Family<prometheus::Counter>& success_;
  prometheus::Family<prometheus::Counter>& failure_;
  prometheus::Family<prometheus::Counter>& count_;
  prometheus::Family<prometheus::Counter>& exec_count_;
  prometheus::Family<prometheus::Counter>& request_us_;
  prometheus::Family<prometheus::Counter>& queue_us_;
  prometheus::Family<prometheus::Counter>& compute_us_;
  prometheus::Family<prometheus::Gauge>& pending_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& rejections_;
  prometheus::Family<prometheus::Counter>& routing_;
  prometheus::Family<prometheus::Counter>& ignored_fields_;
  std::set<std::string> ignored_field_names_;  // guarded by mutex_
  prometheus::Family<prometheus::Histogram>& duration_;
  prometheus::Family<prometheus::Histogram>& batch_size_;
  prometheus::Family<prometheus::Gauge>& breaker_;
  prometheus::Family<prometheus::Counter>& shadow_compared_;
  prometheus::Family<prometheus::Counter>& shadow_disagreed_;
  prometheus::Family<prometheus::Gauge>& shadow_max_error_;
  prometheus::Family<prometheus::Counter>& shadow_dropped_;
  prometheus::Family<prometheus::Counter>& inline_executions_;
  prometheus::Family<prometheus::Gauge>& in_flight_;
  prometheus::Gauge& in_flight_requests_;  // the one cell of in_flight_, set on every request: looked up once
  prometheus::Family<prometheus::Histogram>& ttft_;
  prometheus::Family<prometheus::Histogram>& tpot_;
  prometheus::Family<prometheus::Counter>& prompt_tokens_;
  prometheus::Family<prometheus::Counter>& prompt_tokens_reused_;
  prometheus::Family<prometheus::Counter>& generated_tokens_;
  prometheus::Family<prometheus::Gauge>& active_sequences_;
  prometheus::Family<prometheus::Gauge>& rss_;
  prometheus::Family<prometheus::Counter>& cpu_;
};

// Counts one request in infermark_in_flight_requests for as long as it lives.
class InFlightRequest {
 public:
  explicit InFlightRequest(ServeMetrics& metrics) : metrics_(metrics) { metrics_.add_in_flight(1); }
  ~InFlightRequest() { metrics_.add_in_flight(-1); }
  InFlightRequest(const InFlightRequest&) = delete;
  InFlightRequest& operator=(const InFlightRequest&) = delete;

 private:
  ServeMetrics& metrics_;
};

}  // namespace infermark::serve

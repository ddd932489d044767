#include "serve/serve_metrics.hpp"

#include <sys/resource.h>

#include <prometheus/text_serializer.h>

#include "core/named_enum.hpp"
#include "probes/memory.hpp"

namespace infermark::serve {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// 50 us to ~6.5 s, doubling: the range from a tiny model in process to an overloaded queue.
prometheus::Histogram::BucketBoundaries latency_buckets() {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double b = 50e-6; b < 8; b *= 2) bounds.push_back(b);
  return bounds;
}

prometheus::Histogram::BucketBoundaries batch_buckets() { return {1, 2, 4, 8, 16, 32, 64, 128}; }

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

constexpr NamedValue<RouteChoice> kRouteChoiceNames[] = {{RouteChoice::kHeader, "header"},
                                                         {RouteChoice::kVersion, "version"},
                                                         {RouteChoice::kSticky, "sticky"},
                                                         {RouteChoice::kWeighted, "weighted"}};
// Triton's own spellings.
constexpr NamedValue<FailureReason> kFailureReasonNames[] = {{FailureReason::kRejected, "REJECTED"},
                                                             {FailureReason::kCanceled, "CANCELED"},
                                                             {FailureReason::kBackend, "BACKEND"},
                                                             {FailureReason::kOther, "OTHER"}};

}  // namespace

std::string_view route_choice_label(RouteChoice choice) { return name_in(kRouteChoiceNames, choice); }

std::string_view failure_reason_label(FailureReason reason) { return name_in(kFailureReasonNames, reason); }

ServeMetrics::ServeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      success_(BuildCounter()
                   .Name("nv_inference_request_success")
                   .Help("Successful inference requests (a request of N rows counts 1)")
                   .Register(*registry_)),
      failure_(
          BuildCounter().Name("nv_inference_request_failure").Help("Failed inference requests, by reason").Register(*registry_)),
      count_(BuildCounter()
                 .Name("nv_inference_count")
                 .Help("Inferences performed by successful requests (a request of N rows counts N)")
                 .Register(*registry_)),
      exec_count_(BuildCounter()
                      .Name("nv_inference_exec_count")
                      .Help("Successful model executions (a dynamic batch of several requests counts 1)")
                      .Register(*registry_)),
      request_us_(BuildCounter()
                      .Name("nv_inference_request_duration_us")
                      .Help("Cumulative time of successful requests from queueing to outputs, in microseconds")
                      .Register(*registry_)),
      queue_us_(BuildCounter()
                    .Name("nv_inference_queue_duration_us")
                    .Help("Cumulative time successful requests waited in the queue, in microseconds")
                    .Register(*registry_)),
      compute_us_(BuildCounter()
                      .Name("nv_inference_compute_infer_duration_us")
                      .Help("Cumulative execution time of successful requests, each counting its whole batch, in microseconds")
                      .Register(*registry_)),
      pending_(
          BuildGauge().Name("nv_inference_pending_request_count").Help("Requests waiting in the queue").Register(*registry_)),
      requests_(BuildCounter()
                    .Name("infermark_requests_total")
                    .Help("Inference requests answered, by HTTP status code")
                    .Register(*registry_)),
      rejections_(BuildCounter()
                      .Name("infermark_rejections_total")
                      .Help("Requests refused before inference (queue full, breaker open, shutting down)")
                      .Register(*registry_)),
      routing_(BuildCounter()
                   .Name("infermark_routed_total")
                   .Help("Requests routed to a variant, by how it was chosen (header, version, sticky, weighted)")
                   .Register(*registry_)),
      ignored_fields_(
          BuildCounter()
              .Name("infermark_openai_ignored_fields_total")
              .Help("OpenAI request fields accepted with no effect, by name (the first 32 names; later ones as \"(other)\")")
              .Register(*registry_)),
      duration_(BuildHistogram()
                    .Name("infermark_request_duration_seconds")
                    .Help("Inference request latency by phase: queue, compute, total (server side)")
                    .Register(*registry_)),
      batch_size_(BuildHistogram().Name("infermark_batch_size").Help("Rows per executed batch").Register(*registry_)),
      breaker_(BuildGauge()
                   .Name("infermark_circuit_breaker_open")
                   .Help("1 while a variant's circuit breaker refuses requests")
                   .Register(*registry_)),
      shadow_compared_(BuildCounter()
                           .Name("infermark_shadow_comparisons_total")
                           .Help("Mirrored requests whose outputs were compared, by input shape")
                           .Register(*registry_)),
      shadow_disagreed_(BuildCounter()
                            .Name("infermark_shadow_disagreements_total")
                            .Help("Mirrored requests whose outputs disagreed (by each output kind's rule: top-1, tolerance or "
                                  "cosine), by input shape")
                            .Register(*registry_)),
      shadow_max_error_(BuildGauge()
                            .Name("infermark_shadow_max_abs_error")
                            .Help("Largest absolute output difference seen between a variant and its shadow")
                            .Register(*registry_)),
      shadow_dropped_(BuildCounter()
                          .Name("infermark_shadow_dropped_total")
                          .Help("Mirrored requests not compared (shadow queue full or failed)")
                          .Register(*registry_)),
      inline_executions_(BuildCounter()
                             .Name("infermark_inline_executions_total")
                             .Help("Executions run on the receiving thread (fast model, idle instance; see inline_below_us)")
                             .Register(*registry_)),
      in_flight_(
          BuildGauge().Name("infermark_in_flight_requests").Help("Requests being handled (HTTP and gRPC)").Register(*registry_)),
      in_flight_requests_(in_flight_.Add({})),
      ttft_(BuildHistogram()
                .Name("infermark_time_to_first_token_seconds")
                .Help("Language models: from request arrival to the first generated token")
                .Register(*registry_)),
      tpot_(BuildHistogram()
                .Name("infermark_time_per_output_token_seconds")
                .Help("Language models: time between consecutive generated tokens")
                .Register(*registry_)),
      prompt_tokens_(BuildCounter().Name("infermark_prompt_tokens_total").Help("Prompt tokens processed").Register(*registry_)),
      prompt_tokens_reused_(
          BuildCounter()
              .Name("infermark_prompt_tokens_reused_total")
              .Help("Prompt tokens whose prefill a prefix cache skipped (part of infermark_prompt_tokens_total)")
              .Register(*registry_)),
      generated_tokens_(
          BuildCounter().Name("infermark_generated_tokens_total").Help("Output tokens generated").Register(*registry_)),
      active_sequences_(BuildGauge()
                            .Name("infermark_active_sequences")
                            .Help("Sequences in the running batch (continuous batching)")
                            .Register(*registry_)),
      rss_(BuildGauge().Name("process_resident_memory_bytes").Help("Resident memory size in bytes").Register(*registry_)),
      cpu_(BuildCounter()
               .Name("process_cpu_seconds_total")
               .Help("Total user and system CPU time spent in seconds")
               .Register(*registry_)) {}

VariantMetrics ServeMetrics::variant(const std::string& model, const std::string& variant) {
  const prometheus::Labels labels{{"model", model}, {"version", "1"}, {"variant", variant}};
  auto with = [&](const std::string& key, const std::string& value) {
    auto l = labels;
    l[key] = value;
    return l;
  };
  VariantMetrics m;
  m.success = &success_.Add(labels);
  for (std::size_t i = 0; i < kFailureReasons; ++i)
    m.failures[i] = &failure_.Add(with("reason", std::string(failure_reason_label(static_cast<FailureReason>(i)))));
  m.inferences = &count_.Add(labels);
  m.executions = &exec_count_.Add(labels);
  m.request_us = &request_us_.Add(labels);
  m.queue_us = &queue_us_.Add(labels);
  m.compute_us = &compute_us_.Add(labels);
  m.pending = &pending_.Add(labels);
  m.total_seconds = &duration_.Add(with("phase", "total"), latency_buckets());
  m.queue_seconds = &duration_.Add(with("phase", "queue"), latency_buckets());
  m.compute_seconds = &duration_.Add(with("phase", "compute"), latency_buckets());
  m.batch_rows = &batch_size_.Add(labels, batch_buckets());
  m.breaker_open = &breaker_.Add(labels);
  m.inline_executions = &inline_executions_.Add(labels);
  m.ok_requests = &requests_.Add({{"model", model}, {"variant", variant}, {"code", "200"}});
  for (std::size_t i = 0; i < kRouteChoices; ++i)
    m.routed[i] = &routing_.Add(
        {{"model", model}, {"variant", variant}, {"by", std::string(route_choice_label(static_cast<RouteChoice>(i)))}});
  return m;
}

GenerationMetrics ServeMetrics::generation(const std::string& model, const std::string& variant) {
  const prometheus::Labels labels{{"model", model}, {"version", "1"}, {"variant", variant}};
  auto total = labels;
  total["phase"] = "total";
  GenerationMetrics m;
  m.success = &success_.Add(labels);
  m.total_seconds = &duration_.Add(total, latency_buckets());
  m.ttft_seconds = &ttft_.Add(labels, latency_buckets());
  m.tpot_seconds = &tpot_.Add(labels, latency_buckets());
  m.prompt_tokens = &prompt_tokens_.Add(labels);
  m.prompt_tokens_reused = &prompt_tokens_reused_.Add(labels);
  m.generated_tokens = &generated_tokens_.Add(labels);
  m.active_sequences = &active_sequences_.Add(labels);
  m.pending = &pending_.Add(labels);
  return m;
}

void ServeMetrics::count_request(const std::string& model, const std::string& variant, int http_status) {
  requests_.Add({{"model", model}, {"variant", variant}, {"code", std::to_string(http_status)}}).Increment();
}

void ServeMetrics::count_rejection(const std::string& model, const std::string& variant, const std::string& reason) {
  rejections_.Add({{"model", model}, {"variant", variant}, {"reason", reason}}).Increment();
}

void ServeMetrics::count_routing(const std::string& model, const std::string& variant, RouteChoice how) {
  routing_.Add({{"model", model}, {"variant", variant}, {"by", std::string(route_choice_label(how))}}).Increment();
}

bool ServeMetrics::count_ignored_field(const std::string& field) {
  bool first = false;
  std::string label = field;
  {
    std::lock_guard lock(mutex_);
    if (!ignored_field_names_.count(field) && ignored_field_names_.size() >= kMaxIgnoredFieldNames) label = "(other)";
    first = ignored_field_names_.insert(label).second;
  }
  ignored_fields_.Add({{"field", label}}).Increment();
  return first;
}

void ServeMetrics::count_shadow(const std::string& model, const std::string& variant, const std::string& shadow,
                                const std::string& shape, bool disagreed, double max_abs_error) {
  const prometheus::Labels labels{{"model", model}, {"variant", variant}, {"shadow", shadow}, {"shape", shape}};
  shadow_compared_.Add(labels).Increment();
  auto& disagreements = shadow_disagreed_.Add(labels);  // present at 0 so a rate() has a series
  if (disagreed) disagreements.Increment();
  std::lock_guard lock(mutex_);
  auto& gauge = shadow_max_error_.Add({{"model", model}, {"variant", variant}, {"shadow", shadow}});
  if (max_abs_error > gauge.Value()) gauge.Set(max_abs_error);
}

void ServeMetrics::count_shadow_dropped(const std::string& model, const std::string& variant, const std::string& shadow) {
  shadow_dropped_.Add({{"model", model}, {"variant", variant}, {"shadow", shadow}}).Increment();
}

void ServeMetrics::add_in_flight(double requests) {
  if (requests >= 0)
    in_flight_requests_.Increment(requests);
  else
    in_flight_requests_.Decrement(-requests);
}

std::string ServeMetrics::scrape() {
  {
    std::lock_guard lock(mutex_);
    rss_.Add({}).Set(probes::read_process_memory().rss_mb * 1024 * 1024);
    auto& cpu = cpu_.Add({});
    const double now = process_cpu_seconds();
    if (now > cpu.Value()) cpu.Increment(now - cpu.Value());
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace infermark::serve

// What `infermark serve` serves: models, each with one or more variants (backend, precision,
// threads, instances), batching, queue and fault settings, and the A/B split. Read from a YAML
// model repository file or built from flags for one model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace infermark::serve {

struct BatchingSettings {
  int max_batch_size = 0;  // rows per batch; 0 or 1: unbatched
  std::int64_t max_queue_delay_us = 0;
  std::vector<std::int64_t> preferred_batch_sizes;
};

// When a shadow's output counts as a disagreement, for outputs top-1 cannot judge (see
// serve/shadow_judge): class scores disagree when any row's top class differs.
struct ShadowTolerance {
  double max_abs_error = 0.01;  // scores and other outputs: the largest absolute difference allowed
  double min_cosine = 0.99;     // embeddings: the least cosine similarity allowed
};

struct ShadowSettings {
  std::string to;    // the variant that receives the mirrored requests
  double share = 0;  // share of this variant's requests mirrored, 0..1
  ShadowTolerance tolerance;
};

struct VariantSpec {
  std::string name;
  std::string backend;
  std::filesystem::path model;  // "": the model's file
  std::string precision = "fp32";
  int threads = 0;  // 0: framework default
  int instances = 1;
  int slots = 4;                               // language models: sequences decoded together (continuous batching)
  int context = 0;                             // language models: tokens per sequence; 0: the model's training context
  double weight = 1;                           // share of traffic without an explicit variant, relative to the others
  std::map<std::string, std::string> options;  // framework-specific, as --opt
  std::optional<ShadowSettings> shadow;
};

struct ModelSpec {
  std::string name;
  std::filesystem::path file;
  BatchingSettings batching;
  std::size_t max_queue = 128;  // waiting requests per variant; beyond: 429
  double timeout_ms = 0;        // per request, queue included; 0: none
  int breaker_trip_after = 5;   // consecutive failures that open a variant's breaker; 0: never
  double breaker_cooldown_ms = 1000;
  // An unbatched variant whose execution takes less than this runs on the thread that received the
  // request when an instance is idle: the hand-off to a worker would cost more than the model.
  double inline_below_us = 200;                 // 0: always through the workers
  std::string sticky_header = "X-Request-Key";  // requests with the same value stay on one variant
  std::vector<VariantSpec> variants;
};

struct ServeConfig {
  std::string host = "127.0.0.1";
  std::uint16_t http_port = 8000;
  int grpc_port = 8001;  // KServe v2 over gRPC; 0: any free port; -1: off
  int io_threads = 0;    // 0: one per core
  std::size_t max_body_mb = 64;
  // Connections served at once; beyond it a new one is answered 503 and closed. 0: as many as the
  // open-file limit allows (less a reserve for the server's own files).
  std::size_t max_connections = 0;
  int read_timeout_s = 30;   // a request's body must arrive within this once its headers did (408)
  int idle_timeout_s = 75;   // a connection waiting this long for (the rest of) a request's headers closes (408 if begun)
  int write_timeout_s = 30;  // a client that will not read its answer this long is dropped
  double drain_s = 30;       // SIGTERM: how long in-flight requests may finish
  std::string results_dir = "results";  // at exit, one result per variant under <results_dir>/<local time>-serve/
  std::vector<ModelSpec> models;
};

// The file a variant serves (its own, or the model's), and "model 'm', variant 'v' (backend, file)"
// for error messages.
std::filesystem::path variant_file(const ModelSpec& model, const VariantSpec& variant);
std::string describe_variant(const ModelSpec& model, const VariantSpec& variant);

// Reads a model repository file; throws infermark::Error naming the file and the field.
ServeConfig load_serve_config(const std::filesystem::path& file);
// The same from YAML text; `file` names it in errors and relative model paths are taken from its folder.
ServeConfig parse_serve_config(const std::string& yaml, const std::filesystem::path& file);
// Checks names, weights, shadows and batching; throws infermark::Error naming the field.
void validate(const ServeConfig& config);

}  // namespace infermark::serve

// The protocol-neutral half of a KServe v2 request, shared by the HTTP and the gRPC fronts: find
// the model, pick the variant (a named variant, a version naming one, a sticky key or the weighted
// split), check the inputs, rows and requested outputs, queue the request on the variant's
// workers, and account the outcome (metrics, served traffic, shadow comparison judged by
// serve/shadow_judge). A front only decodes its transport into tensors and hints and encodes the
// result back. Every refusal is a RequestError carrying the HTTP status; the gRPC front maps it to
// a gRPC status code.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "serve/dynamic_batcher.hpp"
#include "serve/model_repository.hpp"
#include "serve/serve_metrics.hpp"
#include "serve/shadow_judge.hpp"

namespace infermark::serve {

// One request between routing and its answer.
struct RoutedInference {
  ServedModel* model = nullptr;
  Variant* variant = nullptr;
  std::vector<Tensor> inputs;    // in the model's order; handed to the variant by submit()
  std::vector<Tensor> mirrored;  // a copy for the shadow variant, when this request is mirrored
  std::int64_t rows = 1;
  std::int64_t started_ns = 0;   // monotonic, when the request arrived
  std::int64_t deadline_ns = 0;  // monotonic; 0: none
};

// The HTTP status that answers an inference outcome (200, 429, 503, 504, 500).
int http_status(InferStatus status);
// Seconds a client refused with 429 or 503 should wait before retrying.
int retry_after_s(const ModelSpec& model);

class InferenceRouter {
 public:
  // Reads the output kinds of every shadowed variant's model (its zoo manifest) to judge shadows
  // by; throws infermark::Error naming a malformed manifest.
  InferenceRouter(ModelRepository& repository, ServeMetrics& metrics);

  ModelRepository& repository() { return repository_; }
  bool ready() const { return ready_; }
  void set_ready(bool ready) { ready_ = ready; }

  // The named model; RequestError(404) naming the served models when there is none.
  ServedModel& model(std::string_view name);
  // The named model for inference; also RequestError(400) when it is a language model.
  ServedModel& tensor_model(std::string_view name);
  // The variant whose metadata, config or readiness a version asks for ("" or "1": the first).
  // RequestError(400) for a language model, (404) for a version that names no variant.
  Variant& described_variant(ServedModel& model, std::string_view version);

  // Picks the variant and checks the request against it: input names, dtypes and shapes, rows
  // against the batch limit, requested output names. `client_deadline_ns` (monotonic, 0: none)
  // tightens the model's own timeout. Throws RequestError.
  RoutedInference route(ServedModel& model, std::vector<Tensor> inputs, const std::vector<std::string>& outputs,
                        const RouteHints& hints, std::int64_t started_ns, std::int64_t client_deadline_ns = 0);
  // Queues the request; `done` runs exactly once, on a worker thread (at once when refused).
  void submit(RoutedInference& request, std::function<void(InferenceResult)> done);
  // Counts the outcome once the answer is ready (metrics, served traffic, failure reasons) and
  // mirrors a successful mirrored request to its shadow. Any thread. Returns the HTTP status.
  int account(RoutedInference& request, const InferenceResult& result);

 private:
  void shadow(RoutedInference& request, const std::vector<Tensor>& outputs);

  ModelRepository& repository_;
  ServeMetrics& metrics_;
  std::atomic<bool> ready_{true};
  std::atomic<std::uint64_t> shadow_draws_{0};
  // Per variant with a shadow; shared with the comparisons still running when a request is done.
  std::map<const Variant*, std::shared_ptr<const ShadowJudge>> shadow_judges_;
};

}  // namespace infermark::serve

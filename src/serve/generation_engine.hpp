// A served language model (one variant) on the continuous-batching GenerationScheduler that
// `run` uses too: requests join the running batch at the next step and leave it when done.
// What serving adds is text: it leaves as it is generated, whole UTF-8 characters, held back
// only as long as a stop string might still be completing; end of generation and stop strings
// end a request (end tokens only once the request's min_tokens are out); TTFT and TPOT go to the
// metrics.
#pragma once

#include <memory>
#include <vector>

#include "backends/generator.hpp"
#include "backends/registry.hpp"
#include "generation/generation_scheduler.hpp"
#include "serve/serve_config.hpp"
#include "serve/serve_metrics.hpp"
#include "serve/served_traffic.hpp"
#include "serve/token_channel.hpp"
#include "serve/variant_backend.hpp"

namespace infermark::serve {

struct GenerationRequest {
  std::vector<TokenId> prompt;
  int max_tokens = 16;
  Sampling sampling;
  std::vector<std::string> stop;  // stop strings: generation ends before the first one
  std::shared_ptr<TokenChannel> channel;
};

class GenerationEngine {
 public:
  // Loads the model with `spec.slots` sequence slots; throws infermark::Error naming model and variant.
  GenerationEngine(const BackendRegistry& registry, const ModelSpec& model, const VariantSpec& spec, GenerationMetrics metrics);
  // On a generator opened elsewhere (tests drive the engine on a scripted one).
  GenerationEngine(std::unique_ptr<Generator> generator, const ModelSpec& model, const VariantSpec& spec,
                   GenerationMetrics metrics);
  ~GenerationEngine();
  GenerationEngine(const GenerationEngine&) = delete;
  GenerationEngine& operator=(const GenerationEngine&) = delete;

  const VariantSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const BackendInfo& backend() const { return backend_.info; }
  int slots() const { return generator_->max_slots(); }
  int context_length() const { return generator_->context_length(); }
  double load_ms() const { return load_ms_; }
  // Tokenizing and chat templates only read the vocabulary: safe beside the stepping thread.
  const Generator& generator() const { return *generator_; }

  ServedTraffic& traffic() { return traffic_; }
  const ServedTraffic& traffic() const { return traffic_; }
  ServedVariant description() const;

  // False when the waiting queue is full or the engine is closing.
  bool submit(GenerationRequest request);
  void close();  // no new requests; running and queued ones finish

 private:
  void start_scheduler(const ModelSpec& model);

  VariantSpec spec_;
  GenerationMetrics metrics_;
  VariantBackend backend_;  // declared before the generator: outlives it
  std::unique_ptr<Generator> generator_;
  double load_ms_ = 0;
  std::uint64_t reused_counted_ = 0;  // the generator's prompt_tokens_reused() already in the metric (stepping thread only)
  ServedTraffic traffic_;
  std::unique_ptr<generation::GenerationScheduler> scheduler_;  // last: stops before what its requests use
};

// How many leading bytes of `text` end on a whole UTF-8 character (an incomplete trailing
// sequence of up to 3 bytes is held back; invalid bytes are not, so they cannot stall a stream).
std::size_t complete_utf8_prefix(std::string_view text);

}  // namespace infermark::serve

// Continuous batching for a served language model (one variant): a stepping thread runs one
// forward pass after another over every active sequence slot; new requests join the running
// batch at the next step, finished ones leave it, as serving engines (vLLM, llama-server) do.
// Text leaves as it is generated: whole UTF-8 characters, held back only as long as a stop
// string might still be completing.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "backends/generator.hpp"
#include "backends/registry.hpp"
#include "serve/serve_config.hpp"
#include "serve/serve_metrics.hpp"
#include "serve/served_traffic.hpp"
#include "serve/variant_backend.hpp"
#include "serve/token_channel.hpp"

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
  struct Active {
    GenerationRequest request;
    std::string unsent;  // generated text not yet pushed (stop-string look-behind, split UTF-8)
    int generated = 0;
    std::int64_t enqueued_ns = 0, last_token_ns = 0;
    std::optional<FinishReason> finished;
  };
  struct Queued {
    GenerationRequest request;
    std::int64_t enqueued_ns = 0;
  };
  void step_loop();
  void on_token(int slot, TokenId token);
  void flush(Active& active, bool final);
  void end(int slot, const std::string& error);

  VariantSpec spec_;
  GenerationMetrics metrics_;
  std::size_t max_queue_;
  VariantBackend backend_;  // declared before the generator: outlives it
  std::unique_ptr<Generator> generator_;
  double load_ms_ = 0;
  ServedTraffic traffic_;
  std::vector<std::optional<Active>> active_;  // by slot; touched by the stepping thread only
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Queued> queue_;
  bool closing_ = false;
  std::thread stepper_;
};

// How many leading bytes of `text` end on a whole UTF-8 character (an incomplete trailing
// sequence of up to 3 bytes is held back; invalid bytes are not, so they cannot stall a stream).
std::size_t complete_utf8_prefix(std::string_view text);

}  // namespace infermark::serve

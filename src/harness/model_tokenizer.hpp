// A served model's own tokenizer, opened in this process from the model file by the generation
// backend that reads its format, so `infermark load` can count a server's tokens as the model does
// instead of taking the server's word for it (or counting streamed pieces).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "backends/generator.hpp"
#include "backends/registry.hpp"

namespace infermark::harness {

class ModelTokenizer {
 public:
  // Opens `model` (a GGUF file, an ONNX Runtime GenAI or OpenVINO LLM folder) with the first
  // available backend that reads its format and generates, on one short slot. Throws
  // infermark::Error naming `flag` and the model: not a language model, no backend for it, or the
  // backend's own reason.
  static std::unique_ptr<ModelTokenizer> open(const BackendRegistry& registry, const std::filesystem::path& model,
                                              const std::string& flag);
  ~ModelTokenizer();
  ModelTokenizer(const ModelTokenizer&) = delete;
  ModelTokenizer& operator=(const ModelTokenizer&) = delete;

  // The tokens of `text` alone: what the tokenizer gives minus what it adds to any text (a
  // beginning-of-sequence token, told from an empty text's tokens). Safe from several threads.
  int count(const std::string& text) const;
  // "llama.cpp b6800 tokenizer of smollm2-135m.gguf".
  const std::string& describe() const { return description_; }

 private:
  ModelTokenizer() = default;
  std::unique_ptr<LoadedBackend> backend_;  // outlives the generator, whose code it holds
  std::unique_ptr<Generator> generator_;
  std::size_t added_ = 0;  // tokens the tokenizer adds to every text
  std::string description_;
  mutable std::mutex mutex_;
};

}  // namespace infermark::harness

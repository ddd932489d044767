// Perplexity of a language model on a real text (`infermark run MODEL.gguf --perplexity-text FILE`):
// the text tokenized by the model's own tokenizer, cut into windows of `window` tokens, each window
// decoded as a fresh sequence with its first half as context and its second half scored, as
// llama.cpp's llama-perplexity does, so the two figures can be compared.
#pragma once

#include <atomic>
#include <filesystem>

#include "backends/generator.hpp"
#include "result/perplexity_result.hpp"

namespace infermark::harness {

constexpr int kDefaultPerplexityWindow = 256;

// `generator` needs a context of at least `window` tokens and no busy slot. Throws infermark::Error
// naming --perplexity-text when the file cannot be read or holds less than one window of tokens.
result::PerplexityResult measure_perplexity(Generator& generator, const std::filesystem::path& text_file, int window,
                                            const std::atomic<bool>* stop = nullptr);

// exp(mean negative log-likelihood) of the windows' scores.
double perplexity_of(const std::vector<WindowScore>& scores);

}  // namespace infermark::harness

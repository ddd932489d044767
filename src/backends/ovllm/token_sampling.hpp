// Choosing the next token from one row of logits: greedy (optionally never an end token, as
// benchmarks that fix output lengths need) or temperature + nucleus sampling for serving.
#pragma once

#include <random>
#include <set>

#include "backends/generator.hpp"

namespace infermark {

// The highest-scoring token of `row`, skipping the tokens in `excluded`.
TokenId greedy_token(const float* row, int vocabulary, const std::set<TokenId>& excluded = {});

// A token drawn from softmax(row / temperature) restricted to the smallest set whose probability
// reaches top_p, never one in `excluded`. temperature 0 is greedy.
TokenId sampled_token(const float* row, int vocabulary, const Sampling& sampling, std::mt19937_64& random,
                      const std::set<TokenId>& excluded = {});

// -log p(token | row) under softmax(row): what perplexity sums.
double negative_log_likelihood(const float* row, int vocabulary, TokenId token);

}  // namespace infermark

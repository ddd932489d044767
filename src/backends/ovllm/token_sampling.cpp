#include "backends/ovllm/token_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace infermark {

TokenId greedy_token(const float* row, int vocabulary, const std::set<TokenId>& excluded) {
  TokenId best = 0;
  float best_score = -std::numeric_limits<float>::infinity();
  for (TokenId t = 0; t < vocabulary; ++t)
    if (row[t] > best_score && !excluded.count(t)) {
      best = t;
      best_score = row[t];
    }
  return best;
}

TokenId sampled_token(const float* row, int vocabulary, const Sampling& sampling, std::mt19937_64& random,
                      const std::set<TokenId>& excluded) {
  if (sampling.temperature <= 0) return greedy_token(row, vocabulary, excluded);
  std::vector<int> order;
  for (TokenId t = 0; t < vocabulary; ++t)
    if (!excluded.count(t)) order.push_back(t);
  if (order.empty()) return greedy_token(row, vocabulary);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
  std::vector<double> weights;
  double total = 0;
  for (const int t : order) {
    weights.push_back(std::exp((static_cast<double>(row[t]) - row[order.front()]) / sampling.temperature));
    total += weights.back();
  }
  // Keep the most likely tokens until their share reaches top_p.
  double kept = 0;
  std::size_t size = 0;
  while (size < weights.size() && kept < sampling.top_p * total) kept += weights[size++];
  std::discrete_distribution<std::size_t> draw(weights.begin(),
                                               weights.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(size, 1)));
  return order[draw(random)];
}

double negative_log_likelihood(const float* row, int vocabulary, TokenId token) {
  const float top = *std::max_element(row, row + vocabulary);
  double total = 0;
  for (int t = 0; t < vocabulary; ++t) total += std::exp(static_cast<double>(row[t]) - top);
  return std::log(total) + top - row[token];
}

}  // namespace infermark

#include "serve/variant_router.hpp"

#include <numeric>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::serve {

VariantRouter::VariantRouter(const std::vector<double>& weights, std::uint64_t seed) : seed_(seed) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (weights.empty() || total <= 0) throw Error("a model's variant weights must add up to more than 0");
  double running = 0;
  for (double w : weights) cumulative_.push_back((running += w) / total);
  cumulative_.back() = 1.0;
}

std::size_t VariantRouter::place(double unit) const {
  for (std::size_t i = 0; i < cumulative_.size(); ++i)
    if (unit < cumulative_[i]) return i;
  return cumulative_.size() - 1;
}

std::size_t VariantRouter::pick(std::string_view sticky_key) {
  if (!sticky_key.empty()) {
    std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, then mixed so near keys spread
    for (unsigned char c : sticky_key) hash = (hash ^ c) * 1099511628211ull;
    return place(SeededRandom(hash ^ seed_).uniform());
  }
  return place(SeededRandom(seed_ + draws_.fetch_add(1) * 0x9E3779B97F4A7C15ull).uniform());
}

}  // namespace infermark::serve

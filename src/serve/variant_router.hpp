// Picks which variant of a model serves a request that does not name one: a weighted split
// (e.g. 90/10), sticky by a request key so one user stays on one variant.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

namespace infermark::serve {

class VariantRouter {
 public:
  // One weight per variant (not all zero); the split is proportional to them.
  explicit VariantRouter(const std::vector<double>& weights, std::uint64_t seed = 0x5eed);

  // A non-empty `sticky_key` always maps to the same variant (a hash of the key placed on the
  // weights); without one, a seeded draw per request.
  std::size_t pick(std::string_view sticky_key);

 private:
  std::size_t place(double unit) const;  // unit in [0, 1) onto the cumulative weights

  std::vector<double> cumulative_;  // normalised, last is 1
  std::uint64_t seed_;
  std::atomic<std::uint64_t> draws_{0};
};

}  // namespace infermark::serve

#include "loadgen/generation.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace infermark::loadgen {

int LengthDistribution::draw(SeededRandom& random, int max) const {
  const double value = stddev > 0 ? mean + stddev * random.normal() : mean;
  return std::clamp(static_cast<int>(std::lround(value)), 1, std::max(1, max));
}

std::string LengthDistribution::describe() const {
  return stddev > 0 ? fmt::format("{:g} ± {:g}", mean, stddev) : fmt::format("{:g}", mean);
}

}  // namespace infermark::loadgen

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

RequestLatencies latencies_of(const RequestRecord& request) {
  RequestLatencies latencies;
  if (request.token_ns.empty()) return latencies;
  const auto first = request.token_ns.front(), last = request.token_ns.back();
  latencies.ttft_ns = first - request.start_ns;
  latencies.e2e_ns = (request.done_ns != 0 ? request.done_ns : last) - request.start_ns;
  // A server may stream several tokens per chunk: the count it reported, not the stamps, divides.
  const int output_tokens = request.output_tokens > 0 ? request.output_tokens : static_cast<int>(request.token_ns.size());
  if (request.token_ns.size() > 1 && output_tokens > 1) latencies.tpot_ns = (last - first) / (output_tokens - 1);
  return latencies;
}

std::vector<RequestLatencies> latencies_of(const std::vector<RequestRecord>& requests) {
  std::vector<RequestLatencies> latencies;
  latencies.reserve(requests.size());
  for (const auto& request : requests) latencies.push_back(latencies_of(request));
  return latencies;
}

}  // namespace infermark::loadgen

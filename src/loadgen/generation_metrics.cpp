#include "loadgen/generation_metrics.hpp"

namespace infermark::loadgen {
namespace {

double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

std::optional<stats::LatencySummary> summary_of(const std::vector<double>& samples) {
  if (samples.empty()) return std::nullopt;
  return stats::summarize(samples);
}

struct GroupSamples {
  long long prompt_tokens = 0;
  std::vector<double> ttft, e2e;
  void add(int prompt, double ttft_ms, double e2e_ms) {
    prompt_tokens += prompt;
    ttft.push_back(ttft_ms);
    e2e.push_back(e2e_ms);
  }
  GroupGeneration summary() const {
    const auto n = ttft.size();
    return {"", n, n > 0 ? static_cast<double>(prompt_tokens) / static_cast<double>(n) : 0.0, summary_of(ttft), summary_of(e2e)};
  }
};

}  // namespace

GenerationMetrics summarize_requests(const std::vector<RequestRecord>& requests, double wall_s) {
  GenerationMetrics m;
  m.requests = requests.size();
  m.wall_s = wall_s;
  std::vector<double> ttft, tpot, itl, e2e, ttft_warm, ttft_cold;
  std::vector<GroupSamples> groups;
  double ttft_s_total = 0, decode_s_total = 0;
  long long decode_tokens = 0;
  for (const auto& r : requests) {
    if (r.token_ns.empty()) continue;
    m.prompt_tokens += r.prompt_tokens;
    // The count of tokens (a server's usage where given); the stamps time them.
    const long long output_tokens = r.output_tokens > 0 ? r.output_tokens : static_cast<long long>(r.token_ns.size());
    m.output_tokens += output_tokens;
    const auto first = r.token_ns.front(), last = r.token_ns.back();
    ttft.push_back(ms(first - r.start_ns));
    if (r.prefix == PrefixWarmth::kWarm) ttft_warm.push_back(ttft.back());
    if (r.prefix == PrefixWarmth::kCold) ttft_cold.push_back(ttft.back());
    e2e.push_back(ms(last - r.start_ns));
    if (groups.size() <= r.group) groups.resize(r.group + 1);
    groups[r.group].add(r.prompt_tokens, ttft.back(), e2e.back());
    ttft_s_total += static_cast<double>(first - r.start_ns) * 1e-9;
    for (std::size_t i = 1; i < r.token_ns.size(); ++i) itl.push_back(ms(r.token_ns[i] - r.token_ns[i - 1]));
    if (r.token_ns.size() > 1 && output_tokens > 1) {
      const auto tokens = output_tokens - 1;
      tpot.push_back(ms(last - first) / static_cast<double>(tokens));
      decode_tokens += tokens;
      decode_s_total += static_cast<double>(last - first) * 1e-9;
    }
  }
  m.ttft_ms = summary_of(ttft);
  m.tpot_ms = summary_of(tpot);
  m.itl_ms = summary_of(itl);
  m.e2e_ms = summary_of(e2e);
  if (!ttft_warm.empty() || !ttft_cold.empty())
    m.prefix = PrefixSplit{ttft_warm.size(), ttft_cold.size(), summary_of(ttft_warm), summary_of(ttft_cold)};
  if (groups.size() > 1)
    for (const auto& group : groups) m.by_group.push_back(group.summary());
  if (ttft_s_total > 0) m.prefill_tokens_per_s = static_cast<double>(m.prompt_tokens) / ttft_s_total;
  if (decode_s_total > 0) m.decode_tokens_per_s = static_cast<double>(decode_tokens) / decode_s_total;
  if (m.wall_s > 0) {
    m.output_tokens_per_s = static_cast<double>(m.output_tokens) / m.wall_s;
    m.requests_per_s = static_cast<double>(m.requests) / m.wall_s;
  }
  return m;
}

void label_groups(GenerationMetrics& metrics, const SampleLibrary& library) {
  for (std::size_t g = 0; g < metrics.by_group.size(); ++g)
    metrics.by_group[g].label = library.group_label(static_cast<std::uint32_t>(g));
}

}  // namespace infermark::loadgen

// Harness overhead: the single-stream loop over a session whose run() does nothing, so the
// time per iteration is what infermark adds to every measured query (clock reads, logging).
#include <benchmark/benchmark.h>

#include "loadgen/single_stream.hpp"
#include "stats/latency_summary.hpp"

namespace {

class NoOpSession final : public infermark::Session {
 public:
  const std::vector<infermark::TensorSpec>& input_specs() const override { return specs_; }
  const std::vector<infermark::TensorSpec>& output_specs() const override { return specs_; }
  void set_inputs(const std::vector<infermark::Tensor>&) override {}
  void run() override { benchmark::ClobberMemory(); }
  std::vector<infermark::Tensor> outputs() override { return {}; }
  std::vector<infermark::EffectiveSetting> effective_settings() const override { return {}; }

 private:
  std::vector<infermark::TensorSpec> specs_;
};

void BM_SingleStreamOverheadPerQuery(benchmark::State& state) {
  NoOpSession session;
  const int queries = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto log = infermark::loadgen::run_single_stream(session, {0, queries});
    benchmark::DoNotOptimize(log.latencies_ms.data());
  }
  state.SetItemsProcessed(state.iterations() * queries);  // items/s -> 1 / overhead per query
}
BENCHMARK(BM_SingleStreamOverheadPerQuery)->Arg(100000);

void BM_SummarizeSamples(benchmark::State& state) {
  std::vector<double> samples(static_cast<std::size_t>(state.range(0)));
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<double>((i * 7919) % 1000) * 0.01;
  for (auto _ : state) benchmark::DoNotOptimize(infermark::stats::summarize(samples));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SummarizeSamples)->Arg(100)->Arg(100000);

}  // namespace

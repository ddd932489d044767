// The Prometheus text the load client scrapes from a server (--scrape): any bytes parse into
// samples or are skipped, never a crash or a throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "remote/prometheus_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto samples = infermark::remote::parse_prometheus_text(text, infermark::remote::server_metric_prefixes());
  (void)samples;
  return 0;
}

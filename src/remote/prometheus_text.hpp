// The Prometheus text exposition format (0.0.4) as a server's /metrics answers it, read into
// samples: the parsing half of the metrics scraper, free of any I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace infermark::remote {

struct MetricSample {
  std::string name;    // "nv_inference_request_success"
  std::string series;  // name with its labels as written: "nv_inference_request_success{model=\"m\",version=\"1\"}"
  double value = 0;
};

// The samples of a text exposition (format 0.0.4) whose names start with one of `prefixes`
// (all when empty). Lines it cannot read are skipped, never an error: a scrape must not end a run.
std::vector<MetricSample> parse_prometheus_text(std::string_view text, const std::vector<std::string>& prefixes);

// The metric families infermark keeps: inference servers' own, not the Go runtime's or the process's.
const std::vector<std::string>& server_metric_prefixes();

}  // namespace infermark::remote

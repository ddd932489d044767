// Samples a server's Prometheus endpoint while a run goes on (Triton's nv_inference_*,
// llama-server's llamacpp:*, vLLM's vllm:*, TGI's tgi_*, infermark serve's own), so a result can
// show what the server saw beside what the client measured: the series over time, each counter's
// change over the measurement, and for KServe servers the mean queue and compute time per request.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/http_client.hpp"
#include "remote/prometheus_text.hpp"

namespace infermark::remote {

class MetricsScraper {
 public:
  // Throws infermark::Error naming --scrape when the URL is not http://host:port/path.
  MetricsScraper(const std::string& url, double interval_s, std::size_t max_series = 2000);
  ~MetricsScraper();
  MetricsScraper(const MetricsScraper&) = delete;
  MetricsScraper& operator=(const MetricsScraper&) = delete;

  const std::string& url() const { return url_; }  // without credentials
  void start();
  // Samples now (between the warm-up and the measurement), so each series' change covers the measurement only.
  void mark() { scrape_once(); }
  // Takes a last sample and stops. `measured_from_ns`: the measurement's start (after warm-up), from
  // which each series' change is taken. `model`: the served model, for the KServe split.
  nlohmann::json finish(std::int64_t measured_from_ns, const std::string& model);

 private:
  void scrape_once();
  void loop();

  std::string url_;
  std::string path_;
  double interval_s_;
  std::size_t max_series_;
  std::unique_ptr<net::HttpClient> client_;
  std::mutex mutex_;
  std::vector<std::int64_t> times_ns_;                 // monotonic, one per successful scrape
  std::map<std::string, std::vector<double>> series_;  // values, aligned with times_ns_ (NaN: absent then)
  std::uint64_t failures_ = 0;
  std::string last_failure_;
  bool truncated_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace infermark::remote
